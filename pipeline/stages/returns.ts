// Stage: daily returns of every stock as DuckDB set work, straight to Parquet. Same convention as
// analytics/returns.ts (first priced date 0.0, then p / previous p − 1 over priced dates, on
// adj_close when given): IEEE division and subtraction give the same doubles as the JS loop.
import { join } from "node:path";
import { lit, type Conn } from "../store/duck.ts";

export async function stockReturnsStage(conn: Conn, out: string): Promise<void> {
  await conn.run(`copy (
      select ticker as id, date, coalesce(p / lag(p) over (partition by ticker order by date) - 1, 0) as ret
      from (select ticker, date, coalesce(adj_close, "close")::double as p from prices)
      order by id, date
    ) to ${lit(join(out, "stock_returns.parquet"))} (format parquet, compression zstd, row_group_size 16384)`);
}
