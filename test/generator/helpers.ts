// Shared helpers of the generator tests: one small sample per test file, simple CSV reading.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "csv-parse/sync";

export const SMALL = { companies: 40, years: 3 } as const;

/** Comma CSV without quoted commas in numeric files: header + rows of strings. */
export function readCsv(dir: string, name: string): { header: string[]; rows: string[][] } {
  const lines = readFileSync(join(dir, name), "utf8").trimEnd().split("\n");
  return { header: lines[0].split(","), rows: lines.slice(1).map((l) => l.split(",")) };
}

/** RFC 4180 CSV (companies may quote names) as records. */
export function readRecords(dir: string, name: string, delimiter = ","): Record<string, string>[] {
  return parse(readFileSync(join(dir, name), "utf8"), { columns: true, delimiter, skip_empty_lines: true }) as Record<
    string,
    string
  >[];
}

/** A statement cell as a number; an empty cell counts as 0 in sums. */
export const num = (s: string | undefined): number => (s === undefined || s === "" ? 0 : Number(s));
