// Stage: daily returns and full-period metric tables of every stock (one partition job per ticker
// range) and of every portfolio, plain and against each benchmark.
import { METRIC_COLS, METRIC_ORDER } from "../store/metric-tables.ts";
import type { BenchmarkResult, PortfolioResult } from "../store/model.ts";
import { appendTable, type Cell, exportParquet } from "../store/write.ts";
import type { StageContext } from "./context.ts";
import { type MetricsJob, subjectMetricRows } from "./metrics-partition.ts";
import { type PartitionJob, runPartitionsInline } from "./partition-jobs.ts";
import { sortedKeys, tickerRanges } from "./partitions.ts";

/** Metric table rows of portfolios (few: computed in the calling thread). */
export async function writePortfolioMetrics(
  ctx: Pick<StageContext, "conn" | "out">,
  portfolios: Iterable<[string, Pick<PortfolioResult, "returns">]>,
  benchmarks: Pick<BenchmarkResult, "id" | "levels">[],
): Promise<void> {
  const list = [...portfolios];
  const bs = benchmarks.map((b) => ({ id: b.id, levels: b.levels }));
  function* rowsOut(): Generator<Cell[]> {
    for (const [id, p] of list) yield* subjectMetricRows(id, p.returns, bs);
  }
  await appendTable(ctx.conn, "portfolio_metrics", METRIC_COLS, rowsOut());
  await exportParquet(ctx.conn, "portfolio_metrics", ctx.out, [], METRIC_ORDER);
}

/**
 * Stock metrics, in two steps so the caller's thread can do other work in between: `start`
 * plans the ticker ranges of the staged `prices` table; the returned promise runs the partition
 * jobs (returns and metrics per range) once `ready` resolves (prices.parquet written); they use
 * their own databases, not `ctx.conn`. Needs the benchmark tables already in `ctx.out`.
 */
export async function startStockMetrics(
  ctx: StageContext,
  ready: Promise<unknown> = Promise.resolve(),
): Promise<{ stocks: number; done: Promise<unknown> }> {
  const tickers = await sortedKeys(ctx.conn, "prices", "ticker");
  const jobs: PartitionJob[] = tickerRanges(tickers, ctx.tickersPerPartition, ctx.parallelism).map((range) => ({
    stage: "metrics",
    data: { out: ctx.out, range } satisfies MetricsJob,
  }));
  const run = ctx.runPartitions ?? runPartitionsInline;
  const done = ready.then(() => run(jobs, (d) => ctx.progress?.("metrics", d, jobs.length)));
  done.then(
    () => ctx.log.info({ stocks: tickers.length, partitions: jobs.length }, "analytics computed"),
    () => undefined,
  );
  return { stocks: tickers.length, done };
}
