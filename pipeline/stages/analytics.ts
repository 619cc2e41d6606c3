// Stage: the full-period metric table of every portfolio, plain and against each benchmark (the
// stocks' are partition jobs per ticker range: metrics-partition.ts).

import { appendTable, type Cell, exportParquet } from "../store/duck/write.ts";
import { METRIC_COLS, METRIC_ORDER } from "../store/snapshot/metric-tables.ts";
import type { BenchmarkResult, PortfolioResult } from "../store/snapshot/model.ts";
import type { StageContext } from "./context.ts";
import { subjectMetricRows } from "./metrics-partition.ts";

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
