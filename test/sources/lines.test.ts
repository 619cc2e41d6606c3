// eachLine must give exactly the lines node:readline gives (the fundamentals split relied on it),
// including line ends that straddle its 4 MB pieces and multi-byte characters at their edges.
import { createReadStream, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import { eachLine } from "../../pipeline/sources/lines.ts";

const dir = mkdtempSync(join(tmpdir(), "lines-"));

async function viaReadline(path: string): Promise<string[]> {
  const out: string[] = [];
  for await (const l of createInterface({ input: createReadStream(path, "utf8"), crlfDelay: Infinity })) out.push(l);
  return out;
}

async function viaEachLine(path: string): Promise<string[]> {
  const out: string[] = [];
  await eachLine(path, (l) => out.push(l));
  return out;
}

const cases: Record<string, string | Buffer> = {
  empty: "",
  "no final end": "a;b\nc;d",
  "final end": "a;b\nc;d\n",
  "blank lines": "\n\na\n\n\nb\n\n",
  crlf: "h1;h2\r\n1;2\r\n3;4\r\n",
  "lone cr": "a\rb\r\rc\r",
  mixed: "a\r\n\rb\n\r\nc",
  "quoted newline": 'T;"x\ny";1\nU;2\n',
  bom: "\uFEFFTicker;Year\nAAA;2020\n",
  "non-ascii": "Société;Zürich\n日本;株式\n",
};
// Line ends and a 3-byte character across the 4 MB piece boundary.
const big = 1 << 22;
for (const [name, tail] of [
  ["crlf across a piece", "\r\n"],
  ["cr ends a piece", "\r"],
  ["character across a piece", "€x\n"],
] as const) {
  const head = Buffer.alloc(big - 1, "a");
  cases[name] = Buffer.concat([head, Buffer.from(`${tail}\nnext\r\nlast`)]);
}
// Every kind of line end, many pieces long.
const ends = ["\n", "\r\n", "\r"];
cases["many lines over pieces"] = Array.from(
  { length: 400_000 },
  (_, i) => `T${i};${"é".repeat(i % 7)};${i}${ends[i % 3]}`,
).join("");

describe("eachLine", () => {
  for (const [name, text] of Object.entries(cases)) {
    it(`splits like readline: ${name}`, async () => {
      const path = join(dir, `${name.replaceAll(" ", "-")}.txt`);
      writeFileSync(path, text);
      expect(await viaEachLine(path)).toEqual(await viaReadline(path));
    });
  }
});
