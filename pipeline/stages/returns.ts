// Stage: daily returns of every stock as DuckDB set work, straight to Parquet. Same convention as
// analytics/returns.ts (first priced date 0.0, then p / previous p − 1 over priced dates, on
// adj_close when given): IEEE division and subtraction give the same doubles as the JS loop.
import { existsSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { lit, type Conn } from "../store/duck.ts";

/**
 * The returns of every stock, staged as one file; each metric partition job writes its range of
 * them as `stock_returns/part-k.parquet` (the published table), and the staged file is removed
 * before publishing (`dropStagedReturns`).
 */
export const stagedFile = (out: string) => join(out, "stock_returns.staged.parquet");
export const RETURNS_PARTS = "stock_returns";
export const RETURNS_ROW_GROUP = 16384;

/**
 * After nightly appends the published parts stay as a full run wrote them, and the returns of
 * every day appended since sit beside them in one file, `stock_returns/days-<last date>.parquet`
 * (in id, date order), which each append rewrites with its new days: the table is the folder.
 */
export const returnsDaysFile = (dir: string, lastDate: string) => join(dir, RETURNS_PARTS, `days-${lastDate}.parquet`);

/** A snapshot's returns files: the ticker-range parts in order, and the appended days' file (or null). */
export function returnsFiles(dir: string): { parts: string[]; days: string | null } {
  const folder = join(dir, RETURNS_PARTS);
  const names = existsSync(folder) ? readdirSync(folder).filter((f) => f.endsWith(".parquet")).sort() : [];
  const days = names.filter((f) => f.startsWith("days-"));
  if (days.length > 1) throw new Error(`${folder} holds ${days.length} files of appended days, not one`);
  return { parts: names.filter((f) => f.startsWith("part-")).map((f) => join(folder, f)), days: days.length ? join(folder, days[0]) : null };
}

export async function stockReturnsStage(conn: Conn, out: string): Promise<void> {
  await conn.run(`copy (
      select ticker as id, date, coalesce(p / lag(p) over (partition by ticker order by date) - 1, 0) as ret
      from (select ticker, date, coalesce(adj_close, "close")::double as p from prices)
      order by id, date
    ) to ${lit(stagedFile(out))} (format parquet, compression zstd, row_group_size ${RETURNS_ROW_GROUP})`);
}

/** The staged returns as a relation. */
export const stagedReturns = (out: string) => `read_parquet(${lit(stagedFile(out))})`;

/** Once every partition wrote its part, the staged whole is not part of the snapshot. */
export function dropStagedReturns(out: string): void {
  rmSync(stagedFile(out), { force: true });
}
