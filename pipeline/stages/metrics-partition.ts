// Partitioned stock metrics: one ticker range's daily returns (from the staged prices.parquet, see
// returns.ts) and full-period metric tables (plain and against each benchmark, from the staged
// benchmark_levels), written as `stock_returns/part-<k>.parquet` and `stock_metrics/part-<k>.parquet`.
// Memory is the range's prices and returns plus the benchmarks.
import { mkdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { alignBenchmark, metricCells } from "../analytics/index.ts";
import { Binds, type Conn, columns, run } from "../store/duck/duck.ts";
import { withScratch } from "../store/duck/scratch.ts";
import { appendTable, type Cell, exportParquetFile, KEYED_ROW_GROUP } from "../store/duck/write.ts";
import { seriesOf, storedSeries } from "../store/read/series-read.ts";
import { METRIC_COLS, METRIC_ORDER, metricTableRows } from "../store/snapshot/metric-tables.ts";
import type { LevelSeries, ReturnSeries } from "../types.ts";
import { inRange, partFile, type TickerRange } from "./partitions.ts";
import { RETURNS_PARTS, RETURNS_ROW_GROUP, returnsFromPrices } from "./returns.ts";

export interface MetricsJob {
  /** The staging folder holding prices.parquet and benchmark_levels.parquet. */
  out: string;
  range: TickerRange;
  /**
   * A nightly append: the range's returns are these Parquet files (the published part, then the
   * appended days), which stay published as they are, so the job writes no returns part. Unset:
   * computed from the staged prices, and written as the range's part.
   */
  returns?: string[];
}

const pq = (dir: string, t: string, b: Binds) => `read_parquet(${b.v(join(dir, `${t}.parquet`))})`;

type Levels = { id: string; levels: LevelSeries }[];
/**
 * The last run's levels, by the files they were read from: a thread (or a flow worker) runs a run's
 * partitions one after another, and each read them again (20 × ~30 ms of an append's metric stage).
 * The executor's host owns one (a partition thread, a flow worker process, an inline batch) and hands
 * it to the partitions. Never mutated by the metrics; the files are written aside and renamed, so a
 * new file is a new key.
 */
export class LevelsCache {
  private last: { key: string; levels: Promise<Levels> } | null = null;

  read(conn: Conn, out: string): Promise<Levels> {
    const key = ["benchmark_levels", "benchmark_defs"]
      .map((t) => {
        const st = statSync(join(out, `${t}.parquet`), { throwIfNoEntry: false });
        return `${join(out, t)}:${st?.ino}:${st?.size}:${st?.mtimeMs}`;
      })
      .join("|");
    if (this.last?.key !== key) {
      const levels = readLevels(conn, out);
      this.last = { key, levels };
      // a failed read is not kept (a newer one stays)
      levels.catch(() => {
        if (this.last?.levels === levels) this.last = null;
      });
    }
    return this.last.levels;
  }
}

/** The benchmarks' level series staged in `out`, through the host's cache when it has one. */
export function benchmarkLevels(conn: Conn, out: string, cache?: LevelsCache): Promise<Levels> {
  return cache ? cache.read(conn, out) : readLevels(conn, out);
}

async function readLevels(conn: Conn, out: string): Promise<Levels> {
  const lb = new Binds();
  const s = await seriesOf(
    conn,
    `select id, strftime(date, '%Y-%m-%d'), level from ${pq(out, "benchmark_levels", lb)} order by id, date`,
    lb.params,
  );
  const b = new Binds();
  const [ids = []] = (await columns(
    conn,
    `select id from ${pq(out, "benchmark_defs", b)} order by id::integer`,
    b.params,
  )) as [string[]];
  return ids.map((id) => ({
    id,
    levels: { dates: s.get(id)?.dates ?? [], levels: s.get(id)?.values ?? new Float64Array() },
  }));
}

/** Metric table rows of one subject: plain, then once per benchmark (none for an empty series). */
export function* subjectMetricRows(
  subject: string,
  r: ReturnSeries,
  benchmarks: { id: string; levels: LevelSeries }[],
): Generator<Cell[]> {
  if (r.dates.length === 0) return;
  yield* metricTableRows(subject, null, metricCells(r));
  for (const b of benchmarks) yield* metricTableRows(subject, b.id, metricCells(r, alignBenchmark(r.dates, b.levels)));
}

export async function metricsPartition(job: MetricsJob, levels?: LevelsCache): Promise<{ subjects: number }> {
  return withScratch(async (conn) => {
    const benchmarks = await benchmarkLevels(conn, job.out, levels);
    let files = job.returns;
    if (!files) {
      // The published returns are partitioned like the metrics: a reader asking for one ticker
      // decodes one range's footer and row groups, not the whole universe's. Written first, then
      // read back in its stored order (no sort of the range's rows in the read).
      const part = join(job.out, RETURNS_PARTS, partFile(job.range.part));
      mkdirSync(dirname(part), { recursive: true });
      const b = new Binds();
      const returnsSql = returnsFromPrices(job.out, inRange("ticker", job.range, b), b);
      await run(conn, `create temp table range_returns as ${returnsSql}`, b.params);
      await conn.run(
        `copy (select * from range_returns order by id, date) to $part (format parquet, compression zstd, ` +
          `row_group_size ${RETURNS_ROW_GROUP})`,
        { part },
      );
      await conn.run("drop table range_returns");
      files = [part];
    }
    // every returns file is stored in (id, date) order: read as stored, not sorted
    const returns = await storedSeries(conn, files, (b) => inRange("id", job.range, b), {
      id: "id",
      date: "date",
      value: "ret",
    });
    function* rowsOut(): Generator<Cell[]> {
      for (const [t, s] of returns) yield* subjectMetricRows(t, { dates: s.dates, returns: s.values }, benchmarks);
    }
    await appendTable(conn, "stock_metrics", METRIC_COLS, rowsOut());
    await exportParquetFile(
      conn,
      "stock_metrics",
      join(job.out, "stock_metrics", partFile(job.range.part)),
      [],
      METRIC_ORDER,
      KEYED_ROW_GROUP,
    );
    return { subjects: returns.size };
  });
}
