// Daily returns of every stock as DuckDB set work. Same convention as analytics/returns.ts (first
// priced date 0.0, then p / previous p − 1 over priced dates, on adj_close when given): IEEE
// division and subtraction give the same doubles as the JS loop.
//
// Each metric partition computes its ticker range's returns from the staged prices.parquet (the
// window is per ticker, so a range computes exactly its rows of the whole) and writes them as
// `stock_returns/part-k.parquet`, the published table: no whole-universe returns file is written
// and read back, and the main thread's last step before the partitions start is gone.
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { Binds } from "../store/duck/duck.ts";

export const RETURNS_PARTS = "stock_returns";
export const RETURNS_ROW_GROUP = 16384;

/** Returns (id, date, ret) of the prices in `out/prices.parquet` whose ticker satisfies `where` (values in `b`). */
export function returnsFromPrices(out: string, where: string, b: Binds): string {
  return `select ticker as id, date, coalesce(p / lag(p) over (partition by ticker order by date) - 1, 0) as ret
    from (select ticker, date, coalesce(adj_close, "close")::double as p
      from read_parquet(${b.v(join(out, "prices.parquet"))}) where ${where})`;
}

/**
 * After nightly appends the published parts stay as a full run wrote them, and the returns of
 * every day appended since sit beside them in one file, `stock_returns/days-<last date>.parquet`
 * (in id, date order), which each append rewrites with its new days: the table is the folder.
 */
export const returnsDaysFile = (dir: string, lastDate: string) => join(dir, RETURNS_PARTS, `days-${lastDate}.parquet`);

/** A snapshot's returns files: the ticker-range parts in order, and the appended days' file (or null). */
export function returnsFiles(dir: string): { parts: string[]; days: string | null } {
  const folder = join(dir, RETURNS_PARTS);
  const names = existsSync(folder)
    ? readdirSync(folder)
        .filter((f) => f.endsWith(".parquet"))
        .sort()
    : [];
  const days = names.filter((f) => f.startsWith("days-"));
  if (days.length > 1) throw new Error(`${folder} holds ${days.length} files of appended days, not one`);
  return {
    parts: names.filter((f) => f.startsWith("part-")).map((f) => join(folder, f)),
    days: days.length ? join(folder, days[0]) : null,
  };
}
