// Partitions of the per-stock work and the job data that names one. A partition job is plain JSON
// (folders and ticker bounds, nothing machine-local but the shared store path), so the in-process
// runner can run it inline or on a worker thread, and a queue could run it as one job.
import { type Binds, type Conn, columns } from "../store/duck/duck.ts";

/** One range of tickers: `from` inclusive, `to` exclusive; null = unbounded. */
export interface TickerRange {
  part: number;
  from: string | null;
  to: string | null;
}

/** Companies per partition: small enough to bound memory, large enough to amortise a DuckDB open. */
export const TICKERS_PER_PARTITION = 250;

/**
 * Splits sorted `tickers` into ranges of about `per` each (at most; their count rounded up to a
 * multiple of `parallelism`, as far as the tickers allow); the bounds are tickers themselves.
 */
export function tickerRanges(tickers: readonly string[], per = TICKERS_PER_PARTITION, parallelism = 1): TickerRange[] {
  const k = Math.max(1, Math.ceil(tickers.length / per));
  const n = Math.max(1, Math.min(tickers.length, Math.ceil(k / parallelism) * parallelism));
  const size = Math.ceil(tickers.length / n);
  const bounds: string[] = [];
  for (let k = 1; k < n && k * size < tickers.length; k++) bounds.push(tickers[k * size]);
  return rangesFromBounds(bounds);
}

export function rangesFromBounds(bounds: readonly string[]): TickerRange[] {
  return Array.from({ length: bounds.length + 1 }, (_, k) => ({
    part: k,
    from: k === 0 ? null : bounds[k - 1],
    to: k === bounds.length ? null : bounds[k],
  }));
}

/** Lower bounds of ranges 1..n (the splitter's form). */
export const boundsOf = (ranges: readonly TickerRange[]) => ranges.slice(1).map((r) => r.from!);

/** SQL condition for `col` inside the range, its bounds bound in `b`. */
export function inRange(col: string, r: TickerRange, b: Binds): string {
  const c = [r.from !== null ? `${col} >= ${b.v(r.from)}` : "", r.to !== null ? `${col} < ${b.v(r.to)}` : ""].filter(
    Boolean,
  );
  return c.length ? c.join(" and ") : "true";
}

export const partFile = (part: number) => `part-${String(part).padStart(4, "0")}.parquet`;

/** Sorted distinct values of `col` in `relation`. */
export async function sortedKeys(conn: Conn, relation: string, col: string): Promise<string[]> {
  const [v = []] = (await columns(conn, `select distinct ${col} from ${relation} order by 1`)) as [string[]];
  return v;
}
