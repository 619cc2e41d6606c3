// Splits the `fundamentals/` folder by ticker range so each financials partition reads only its
// companies: every file is streamed once, each record goes to its range's copy of the file (the
// header first), and `<file>.rows` (Int32, little-endian) keeps each record's row number in the
// original file so rejects still name it. Memory is one record plus a small buffer per partition.
import { appendFileSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import { lowerBound } from "../shared/lower-bound.ts";
import { fundamentalsFileName } from "./fundamentals.ts";
import { eachLine } from "./lines.ts";

const FILES = (["income", "balance", "cashflow", "derived"] as const).flatMap((k) =>
  (["annual", "quarterly"] as const).map((p) => fundamentalsFileName(k, p)),
);
const FLUSH_CHARS = 1 << 22;

/** Partition of an upper-case ticker: ranges start at `bounds` (ascending; partition 0 below the first). */
export const partitionOf = (bounds: readonly string[], ticker: string): number => lowerBound(bounds, ticker, true);

const partDir = (outDir: string, part: number) => join(outDir, `part-${part}`);

/**
 * Splits `dir` into `outDir/part-<k>/` (k < bounds.length + 1); returns the partition folders.
 * `known` (upper-case tickers): records of other companies are left out — SimFin's bulk files cover
 * every US company, and a statement no company row describes is never served (on the real source,
 * 2,283 companies' files for 505 companies).
 */
export async function splitFundamentals(
  dir: string,
  outDir: string,
  bounds: readonly string[],
  known?: ReadonlySet<string>,
): Promise<string[]> {
  const parts = bounds.length + 1;
  const dirs = Array.from({ length: parts }, (_, k) => partDir(outDir, k));
  for (const d of dirs) mkdirSync(d, { recursive: true });
  if (!existsSync(dir)) return dirs;
  for (const file of FILES) {
    const path = join(dir, file);
    if (existsSync(path)) await splitFile(path, file, dirs, bounds, known);
  }
  return dirs;
}

async function splitFile(
  path: string,
  file: string,
  dirs: string[],
  bounds: readonly string[],
  known?: ReadonlySet<string>,
): Promise<void> {
  const text: string[][] = dirs.map(() => []);
  const size = dirs.map(() => 0);
  const rows: number[][] = dirs.map(() => []);
  const flush = (k: number) => {
    if (text[k].length) appendFileSync(join(dirs[k], file), text[k].join(""));
    text[k] = [];
    size[k] = 0;
  };
  let tickerAt = -1;
  let header: string | null = null;
  let row = 0;
  let pending = "";
  await eachLine(path, (line) => {
    // A quoted cell may span lines: gather physical lines until the quotes balance.
    const rec = pending ? `${pending}\n${line}` : line;
    if (quotes(rec) % 2 === 1) {
      pending = rec;
      return;
    }
    pending = "";
    if (header === null) {
      header = rec;
      const cells =
        (parse(rec, { delimiter: ";", bom: true, relax_column_count: true, trim: true }) as string[][])[0] ?? [];
      tickerAt = cells.indexOf("Ticker");
      for (const d of dirs) writeFileSync(join(d, file), `${rec}\n`);
      return;
    }
    row++;
    // Without a Ticker column the file is rejected whole: one partition reports it once.
    const ticker = tickerAt < 0 ? "" : tickerOf(rec, tickerAt);
    if (known && tickerAt >= 0 && !known.has(ticker)) return;
    const k = tickerAt < 0 ? 0 : partitionOf(bounds, ticker);
    text[k].push(rec, "\n");
    rows[k].push(row);
    size[k] += rec.length + 1;
    if (size[k] > FLUSH_CHARS) flush(k);
  });
  if (pending) {
    row++;
    text[0].push(pending, "\n");
    rows[0].push(row);
  }
  for (let k = 0; k < dirs.length; k++) {
    flush(k);
    writeFileSync(join(dirs[k], `${file}.rows`), Buffer.from(Int32Array.from(rows[k]).buffer));
  }
}

function quotes(s: string): number {
  let n = 0;
  for (let i = s.indexOf('"'); i >= 0; i = s.indexOf('"', i + 1)) n++;
  return n;
}

function tickerOf(rec: string, at: number): string {
  if (rec.includes('"'))
    return (((parse(rec, { delimiter: ";", relax_column_count: true, trim: true }) as string[][])[0] ?? [])[at] ?? "")
      .trim()
      .toUpperCase();
  // No quotes: the field is between the at-th and the next separator (no array of every cell).
  let start = 0;
  for (let k = 0; k < at; k++) {
    start = rec.indexOf(";", start) + 1;
    if (start === 0) return "";
  }
  const end = rec.indexOf(";", start);
  return rec
    .slice(start, end < 0 ? rec.length : end)
    .trim()
    .toUpperCase();
}
