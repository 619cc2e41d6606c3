// Which sources are an append of the recorded one: files that only grew at their end (after a
// line break) or folders that only gained files, in the dated tables, with prices among them.

import { createHash } from "node:crypto";
import { appendFileSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { guessAppend, planAppend } from "../../pipeline/sources/append-plan.ts";
import { prefixSha256, sourceFilesAsync, sourceFingerprint } from "../../pipeline/sources/fingerprint.ts";

function source(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "plan-"));
  for (const [name, text] of Object.entries(files)) {
    if (text === undefined) continue;
    mkdirSync(join(dir, name, ".."), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

const BASE = {
  "companies.csv": "ticker,name,sector,industry\nAAA,A,S,I\n",
  "prices.csv": "date,ticker,close\n2024-01-02,AAA,10\n",
  "ratings.csv": "date,ticker,total_rating\n2024-01-01,AAA,5\n",
  "portfolios.json": "{}",
};

async function recordOf(dir: string) {
  return (await sourceFilesAsync(dir)).files;
}

describe("planAppend", () => {
  it("records each file's size and sha256, and the fingerprint is the hash of that list", async () => {
    const dir = source(BASE);
    const s = await sourceFilesAsync(dir);
    const p = s.files.find((f) => f.path === "prices.csv")!;
    expect(p.size).toBe(BASE["prices.csv"].length);
    expect(p.sha256).toBe(createHash("sha256").update(BASE["prices.csv"]).digest("hex"));
    expect(s.files.map((f) => f.path)).toEqual(["companies.csv", "portfolios.json", "prices.csv", "ratings.csv"]);
    expect(sourceFingerprint(dir)).toBe(s.id);
  });

  it("sees lines added at the end of prices (and ratings) as an append", async () => {
    const dir = source(BASE);
    const record = await recordOf(dir);
    appendFileSync(join(dir, "prices.csv"), "2024-01-03,AAA,11\n");
    appendFileSync(join(dir, "ratings.csv"), "2024-02-01,AAA,6\n");
    const plan = await planAppend(dir, record);
    expect(plan).toMatchObject({ kind: "append", grown: ["prices", "ratings"] });
  });

  it("hashes a prefix from the nearest kept state (past the 64 MB checkpoint too)", async () => {
    const line = "2024-01-02,AAA,10.00\n";
    const big = line.repeat(Math.ceil((65 << 20) / line.length));
    const dir = source({ ...BASE, "prices.csv": `date,ticker,close\n${big}` });
    const record = await recordOf(dir);
    appendFileSync(join(dir, "prices.csv"), "2024-01-03,AAA,11\n");
    const old = record.find((f) => f.path === "prices.csv")!;
    expect(old.size).toBeGreaterThan(64 << 20);
    // the file read in 4 MB chunks (17 of them, the last short) hashes as the whole text in one call
    expect(old.sha256).toBe(createHash("sha256").update(`date,ticker,close\n${big}`).digest("hex"));
    expect(prefixSha256(join(dir, "prices.csv"), old.size)).toBe(old.sha256);
    expect(prefixSha256(join(dir, "prices.csv"), 5)).toBe(createHash("sha256").update("date,").digest("hex"));
    expect(await planAppend(dir, record)).toMatchObject({ kind: "append", grown: ["prices"] });
  });

  it("sees a new file in a prices folder as an append", async () => {
    const dir = source({ ...BASE, "prices.csv": undefined as never, "prices/2024-01.csv": BASE["prices.csv"] });
    const record = await recordOf(dir);
    writeFileSync(join(dir, "prices/2024-02.csv"), "date,ticker,close\n2024-02-01,AAA,12\n");
    expect(await planAppend(dir, record)).toMatchObject({ kind: "append", grown: ["prices"] });
  });

  const full = async (change: (dir: string) => void, files: Record<string, string> = BASE) => {
    const dir = source(files);
    const record = await recordOf(dir);
    change(dir);
    const plan = await planAppend(dir, record);
    expect(plan.kind).toBe("full");
    return (plan as { reason: string }).reason;
  };

  it("runs in full when anything else changed", async () => {
    expect(await full(() => undefined)).toBe("the source is unchanged");
    expect(
      await full((d) =>
        writeFileSync(join(d, "prices.csv"), "date,ticker,close\n2024-01-02,AAA,10.5\n2024-01-03,AAA,11\n"),
      ),
    ).toBe("prices.csv changed, not only at its end");
    expect(await full((d) => appendFileSync(join(d, "companies.csv"), "BBB,B,S,I\n"))).toBe("companies.csv changed");
    expect(await full((d) => appendFileSync(join(d, "ratings.csv"), "2024-02-01,AAA,6\n"))).toBe(
      "only ratings or index series grew",
    );
    expect(await full((d) => writeFileSync(join(d, "extra.csv"), "x\n"))).toBe("extra.csv is new");
    // The recorded file did not end with a line break: the new bytes continue its last line.
    const noEol = { ...BASE, "prices.csv": "date,ticker,close\n2024-01-02,AAA,10" };
    expect(await full((d) => appendFileSync(join(d, "prices.csv"), "\n2024-01-03,AAA,11\n"), noEol)).toBe(
      "prices.csv did not end with a line break where the new rows begin",
    );
    expect(
      await full((d) => writeFileSync(join(d, "prices/2024-01.csv"), "date,ticker,close\n"), {
        ...BASE,
        "prices.csv": undefined as never,
        "prices/2024-01.csv": BASE["prices.csv"],
      }),
    ).toBe("prices/2024-01.csv changed (only CSV files grow by lines)");
  });
  it("sizes alone guess what hashes decide for an append; for a same-size edit, an append they refuse", async () => {
    const dir = source(BASE);
    const record = await recordOf(dir);
    appendFileSync(join(dir, "prices.csv"), "2024-01-03,AAA,11\n");
    expect(guessAppend(dir, record)).toMatchObject({ kind: "append", grown: ["prices"] });
    expect(await planAppend(dir, record)).toMatchObject({ kind: "append", grown: ["prices"] });
    // companies.csv edited to another name of the same length: only the bytes tell.
    writeFileSync(join(dir, "companies.csv"), BASE["companies.csv"].replace("AAA,A,", "AAA,B,"));
    expect(guessAppend(dir, record)).toMatchObject({ kind: "append", grown: ["prices"] });
    expect(await planAppend(dir, record)).toMatchObject({ kind: "full", reason: "companies.csv changed" });
    // A size change the guess sees at once.
    appendFileSync(join(dir, "companies.csv"), "BBB,B,S,I\n");
    expect(guessAppend(dir, record)).toMatchObject({ kind: "full", reason: "companies.csv changed" });
  });
});
