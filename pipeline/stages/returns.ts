// Stage: daily returns of every stock as DuckDB set work, straight to Parquet. Same convention as
// analytics/returns.ts (first priced date 0.0, then p / previous p − 1 over priced dates, on
// adj_close when given): IEEE division and subtraction give the same doubles as the JS loop.
import { rmSync } from "node:fs";
import { join } from "node:path";
import { lit, type Conn } from "../store/duck.ts";

/**
 * The returns of every stock, staged as one file; each metric partition job writes its range of
 * them as `stock_returns/part-k.parquet` (the published table), and the staged file is removed
 * before publishing (`dropStagedReturns`).
 */
const stagedFile = (out: string) => join(out, "stock_returns.staged.parquet");
export const RETURNS_PARTS = "stock_returns";
export const RETURNS_ROW_GROUP = 16384;

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
