// Partitioned stock metrics: one ticker range's full-period metric tables (plain and against each
// benchmark), read from the staged stock_returns and benchmark_levels Parquet and written as
// `stock_metrics/part-<k>.parquet`. Memory is the range's returns plus the benchmarks.
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { RETURNS_PARTS, RETURNS_ROW_GROUP, stagedFile } from "./returns.ts";
import { alignBenchmark, metricCells } from "../analytics/index.ts";
import { columns, lit, type Conn } from "../store/duck.ts";
import { withScratch } from "../store/scratch.ts";
import { seriesOf, storedSeries } from "../store/series-read.ts";
import { METRIC_COLS, METRIC_ORDER, metricTableRows } from "../store/metric-tables.ts";
import { appendTable, exportParquetFile, KEYED_ROW_GROUP, type Cell } from "../store/write.ts";
import type { LevelSeries, ReturnSeries } from "../types.ts";
import { inRange, partFile, type TickerRange } from "./partitions.ts";

export interface MetricsJob {
  /** The staging folder holding the staged returns (returns.ts) and benchmark_levels.parquet. */
  out: string;
  range: TickerRange;
  /**
   * A nightly append: the range's returns are these Parquet files (the published part, then the
   * appended days), which stay published as they are, so the job writes no returns part. Unset:
   * the staged returns, whose range the job writes as its part.
   */
  returns?: string[];
}

const pq = (dir: string, t: string) => `read_parquet(${lit(join(dir, `${t}.parquet`))})`;

export async function benchmarkLevels(conn: Conn, out: string): Promise<{ id: string; levels: LevelSeries }[]> {
  const s = await seriesOf(conn, `select id, strftime(date, '%Y-%m-%d'), level from ${pq(out, "benchmark_levels")} order by id, date`);
  const [ids = []] = (await columns(conn, `select id from ${pq(out, "benchmark_defs")} order by id::integer`)) as [string[]];
  return ids.map((id) => ({ id, levels: { dates: s.get(id)?.dates ?? [], levels: s.get(id)?.values ?? new Float64Array() } }));
}

/** Metric table rows of one subject: plain, then once per benchmark (none for an empty series). */
export function* subjectMetricRows(subject: string, r: ReturnSeries, benchmarks: { id: string; levels: LevelSeries }[]): Generator<Cell[]> {
  if (r.dates.length === 0) return;
  yield* metricTableRows(subject, null, metricCells(r));
  for (const b of benchmarks) yield* metricTableRows(subject, b.id, metricCells(r, alignBenchmark(r.dates, b.levels)));
}

export async function metricsPartition(job: MetricsJob): Promise<{ subjects: number }> {
  return withScratch(async (conn) => {
    const benchmarks = await benchmarkLevels(conn, job.out);
    // every returns file is stored in (id, date) order: read as stored, not sorted
    const returns = await storedSeries(conn, job.returns ?? [stagedFile(job.out)], inRange("id", job.range), { id: "id", date: "date", value: "ret" });
    function* rowsOut(): Generator<Cell[]> {
      for (const [t, s] of returns) yield* subjectMetricRows(t, { dates: s.dates, returns: s.values }, benchmarks);
    }
    await appendTable(conn, "stock_metrics", METRIC_COLS, rowsOut());
    await exportParquetFile(conn, "stock_metrics", join(job.out, "stock_metrics", partFile(job.range.part)), [], METRIC_ORDER, KEYED_ROW_GROUP);
    if (job.returns) return { subjects: returns.size };
    // The published returns are partitioned like the metrics: a reader asking for one ticker
    // decodes one range's footer and row groups, not the whole universe's. (The staged file is
    // in this order already, but without the sort the scan's partial first chunk moves the row
    // group boundaries: the same rows in other bytes.)
    const part = join(job.out, RETURNS_PARTS, partFile(job.range.part));
    mkdirSync(dirname(part), { recursive: true });
    await conn.run(`copy (select * from read_parquet(${lit(stagedFile(job.out))}) where ${inRange("id", job.range)} order by id, date) to ${lit(part)} (format parquet, compression zstd, row_group_size ${RETURNS_ROW_GROUP})`);
    return { subjects: returns.size };
  });
}
