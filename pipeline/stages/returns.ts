// Daily returns of every stock as DuckDB set work. Same convention as analytics/returns.ts (first
// priced date 0.0, then p / previous p − 1 over priced dates, on adj_close when given): IEEE
// division and subtraction give the same doubles as the JS loop.
//
// Each metric partition computes its ticker range's returns from the staged prices.parquet (the
// window is per ticker, so a range computes exactly its rows of the whole) and writes them as
// `stock_returns/part-k.parquet`, the published table: no whole-universe returns file is written
// and read back, and the main thread's last step before the partitions start is gone.
import { join } from "node:path";
import { lit } from "../store/duck.ts";

export const RETURNS_PARTS = "stock_returns";
export const RETURNS_ROW_GROUP = 16384;

/** The returns (id, date, ret) of the prices in `out/prices.parquet` whose ticker satisfies `where`. */
export function returnsFromPrices(out: string, where: string): string {
  return `select ticker as id, date, coalesce(p / lag(p) over (partition by ticker order by date) - 1, 0) as ret
    from (select ticker, date, coalesce(adj_close, "close")::double as p from read_parquet(${lit(join(out, "prices.parquet"))}) where ${where})`;
}
