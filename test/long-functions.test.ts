// Functions of at most 60 lines (the developers' guide): scripts/long-functions.mjs parses the
// sources with the TypeScript compiler and names each longer function, method or arrow function
// that has no `// long-function: <reason>` comment on the line before it.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "..");
const SCRIPT = join(ROOT, "scripts/long-functions.mjs");

/** The folders held to the limit (bench/ is not: its measuring loops are written out whole). */
const CHECKED = ["pipeline", "data", "scripts", "api", "jobs", "web"];

interface Found {
  file: string;
  line: number;
  name: string;
  lines: number;
}

/** The script's findings as JSON (it exits 1 when it finds one: that is an answer, not a failure). */
function longFunctions(args: string[]): Found[] {
  try {
    return JSON.parse(execFileSync(process.execPath, [SCRIPT, "--json", ...args], { encoding: "utf8" }));
  } catch (e) {
    const out = (e as { stdout?: string }).stdout;
    if (!out) throw e;
    return JSON.parse(out);
  }
}

describe("function length", () => {
  it(`has no function over 60 lines without a reason in ${CHECKED.join("/, ")}/`, () => {
    const found = longFunctions(CHECKED);
    expect(found.map((f) => `${f.file}:${f.line}: ${f.name} (${f.lines} lines)`)).toEqual([]);
  });

  const dir = mkdtempSync(join(tmpdir(), "long-functions-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("names each function over the limit, counting from its first line to its last (the check can fail)", () => {
    // bodies of n lines between the opening and closing lines: n + 2 lines in all
    const body = (n: number) => Array.from({ length: n }, (_, i) => `  x += ${i};`).join("\n");
    const src = [
      `export function sixty(x: number) {\n${body(57)}\n  return x;\n}`, // 60 lines: allowed
      `export function sixtyOne(x: number) {\n${body(58)}\n  return x;\n}`, // 61: found
      `// long-function: a tight loop kept whole (a reason)\nexport function excused(x: number) {\n${body(80)}\n}`,
      `// long-function:\nexport const noReason = (x: number) => {\n${body(70)}\n};`, // an empty reason excuses nothing
      `export class K {\n  method(x: number) {\n${body(61)}\n  }\n}`, // 63-line method
    ].join("\n");
    writeFileSync(join(dir, "a.ts"), src);
    // line numbers: sixty at 1 (60 lines), sixtyOne at 61 (61), the comment at 122, excused at 123
    // (82 lines, to 204), the comment at 205, noReason at 206 (72, to 277), class at 278, method at 279
    expect(longFunctions(["--root", dir, "a.ts"])).toEqual([
      { file: "a.ts", line: 61, name: "sixtyOne", lines: 61 },
      { file: "a.ts", line: 206, name: "noReason", lines: 72 },
      { file: "a.ts", line: 279, name: "method", lines: 63 },
    ]);
  });
});
