// Stage: daily returns of every stock and full-period metric rows of every stock and portfolio,
// without a benchmark and against each benchmark.
import { alignBenchmark, metricRows, stockReturns } from "../analytics/index.ts";
import { metricsKey, type BenchmarkResult, type PortfolioResult } from "../store/model.ts";
import { appendTable, exportParquet, type Cell } from "../store/write.ts";
import type { MetricRow, ReturnSeries } from "../types.ts";
import type { StageContext } from "./context.ts";
import type { Frames } from "./frames.ts";

export function allStockReturns(frames: Frames): Map<string, ReturnSeries> {
  const out = new Map<string, ReturnSeries>();
  frames.panel.tickers.forEach((t, i) => out.set(t, stockReturns(frames.panel.dates, frames.panel.close[i])));
  return out;
}

/** Metric rows for one subject: plain, then once per benchmark. */
export function subjectMetrics(kind: "stock" | "portfolio", id: string, column: string, r: ReturnSeries, benchmarks: BenchmarkResult[]): [string, MetricRow[]][] {
  if (r.dates.length === 0) return [];
  const out: [string, MetricRow[]][] = [[metricsKey(kind, id), metricRows(r, column)]];
  for (const b of benchmarks) out.push([metricsKey(kind, id, b.id), metricRows(r, column, { name: b.name, returns: alignBenchmark(r.dates, b.levels) })]);
  return out;
}

export async function writeMetrics(ctx: StageContext, table: string, entries: Iterable<[string, MetricRow[]]>): Promise<void> {
  function* metricCells(): Generator<Cell[]> {
    for (const [key, rowsOf] of entries) yield [key, JSON.stringify(rowsOf)];
  }
  await appendTable(ctx.conn, table, [["key", "varchar"], ["rows", "varchar"]], metricCells());
  await exportParquet(ctx.conn, table, ctx.out, [], "key");
}

export async function analyticsStage(ctx: StageContext, frames: Frames, portfolios: Map<string, PortfolioResult>, benchmarks: BenchmarkResult[]) {
  const returns = allStockReturns(frames);
  function* returnCells(): Generator<Cell[]> {
    for (const [t, r] of returns) for (let i = 0; i < r.dates.length; i++) yield [t, r.dates[i], r.returns[i]];
  }
  await appendTable(ctx.conn, "stock_returns", [["id", "varchar"], ["date", "date"], ["ret", "double"]], returnCells());
  await exportParquet(ctx.conn, "stock_returns", ctx.out, ["date"], "id, date");

  const stockMetrics: [string, MetricRow[]][] = [];
  let done = 0;
  for (const [t, r] of returns) {
    stockMetrics.push(...subjectMetrics("stock", t, t, r, benchmarks));
    if (++done % 50 === 0) ctx.progress?.("metrics", done, returns.size);
  }
  await writeMetrics(ctx, "stock_metrics", stockMetrics);
  const portfolioMetrics = [...portfolios].flatMap(([id, p]) => subjectMetrics("portfolio", id, "Portfolio", p.returns, benchmarks));
  await writeMetrics(ctx, "portfolio_metrics", portfolioMetrics);
  ctx.log.info({ stocks: returns.size, metricSets: stockMetrics.length + portfolioMetrics.length }, "analytics computed");
  return { returns, metrics: new Map([...stockMetrics, ...portfolioMetrics]) };
}
