// A rejected CSV row is reported at the line an editor shows for it: found here by searching the
// written file's text for the bad line, not from the reader's row count.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { stageSource } from "../../pipeline/sources/index.ts";
import { formatReject } from "../../pipeline/sources/report.ts";
import { type Conn, openDuck } from "../../pipeline/store/duck/duck.ts";
import { tinyFiles, writeTinySource } from "../fixtures/tiny-source.ts";

let db: Awaited<ReturnType<typeof openDuck>>;
let conn: Conn;
beforeEach(async () => {
  db = await openDuck();
  conn = db.conn;
});
afterEach(() => db.close());

/** 1-based line of the first line of `text` equal to `line`, as an editor numbers them. */
const editorLine = (text: string, line: string) => text.split("\n").indexOf(line) + 1;

describe("rejected rows name file lines", () => {
  it("a bad value and a duplicate, with the duplicate's first occurrence", async () => {
    const lines = tinyFiles()["prices.csv"].split("\n");
    const bad = lines[40]!.replace(/,[\d.]+,1000,/, ",abc,1000,");
    lines[40] = bad;
    const dupOf = lines[2]!;
    const dir = writeTinySource(() => ({ "prices.csv": `${lines.join("\n")}\n${dupOf}` }));
    const text = readFileSync(join(dir, "prices.csv"), "utf8");
    const s = await stageSource(conn, dir);
    const out = s.rejects.map(formatReject);
    const badAt = editorLine(text, bad);
    const dupAt = text.split("\n").lastIndexOf(dupOf) + 1;
    expect(badAt).toBe(41); // the header (index 0) is line 1
    expect(out).toContain(`prices.csv:${badAt} [close] not a number`);
    expect(out).toContain(`prices.csv:${dupAt} [ticker+date] duplicate key, first at line ${editorLine(text, dupOf)}`);
  });

  it("a file-level problem names the file alone; JSON items are numbered, not lines", () => {
    expect(formatReject({ file: "prices.csv", row: 0, column: "close", reason: "required column is missing" })).toBe(
      "prices.csv [close] required column is missing",
    );
    expect(formatReject({ file: "portfolios.json", row: 2, column: "benchmarks.series", reason: "x" })).toBe(
      "portfolios.json row 2 [benchmarks.series] x",
    );
  });
});
