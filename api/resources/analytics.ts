// Metric rows and performance series of a subject (a stock or a portfolio): stored full-period
// rows when present, else computed from the stored daily returns (contract §4, §6).
import {
  alignBenchmark,
  avgAnnualTurnover,
  metricRows,
  performanceSeries,
  type SeriesObject,
  type SeriesType,
  sliceByPeriod,
  turnoverRow,
} from "../../pipeline/analytics/index.ts";
import type { BenchmarkResult } from "../../pipeline/store/snapshot/model.ts";
import type { Company, MetricRow, ReturnSeries } from "../../pipeline/types.ts";
import { InvalidParameter } from "../errors.ts";
import type { SnapshotRef } from "./snapshot-access.ts";
import * as access from "./snapshot-access.ts";

/** Whose returns: a stock (id = ticker, column = ticker) or a portfolio (column "Portfolio"). */
export interface Subject {
  kind: "stock" | "portfolio";
  id: string;
  column: string;
  returns: ReturnSeries;
  /** A portfolio with trading costs: its rebalances' turnover, for the average annual turnover row. */
  turnover?: { date: string; turnover: number }[];
}

/** A stock as a subject; `load` reads its returns (batched by GraphQL, direct for REST). */
export async function stockSubject(c: Company, load: (ticker: string) => Promise<ReturnSeries>): Promise<Subject> {
  return { kind: "stock", id: c.ticker, column: c.ticker, returns: await load(c.ticker) };
}
export const stockReturnsOf = (s: SnapshotRef) => (ticker: string) => access.stockReturns(s, ticker);

/** The benchmark named by id; unknown → 400 naming the `benchmark` parameter. */
export async function benchmarkOf(s: SnapshotRef, id: string | undefined | null): Promise<BenchmarkResult | undefined> {
  if (id == null) return undefined;
  const b = await access.benchmarkById(s, id);
  if (!b) throw InvalidParameter.one("benchmark", `unknown benchmark id ${JSON.stringify(id)}`);
  return b;
}

export function checkRollingBeta(type: SeriesType, bench: BenchmarkResult | undefined): void {
  if (type === "rolling_beta" && !bench) throw InvalidParameter.one("benchmark", "rolling_beta requires benchmark");
}

/**
 * Metric rows: the stored full-period rows; for a `period`, computed over the returns after
 * `latest − period` (a period covering the whole history is the stored answer). Empty history → [].
 */
export async function metricsOf(
  s: SnapshotRef,
  subject: Subject,
  bench: BenchmarkResult | undefined,
  period: number | undefined,
  stored?: MetricRow[],
): Promise<MetricRow[]> {
  const rows = await tableOf(s, subject, bench, period, stored);
  if (!subject.turnover || rows.length === 0) return rows;
  const dates = period === undefined ? subject.returns.dates : sliceByPeriod(subject.returns, period).dates;
  return [...rows, turnoverRow(avgAnnualTurnover(dates, subject.turnover), subject.column, bench?.name) as MetricRow];
}

/** The metric table of contract §6: stored, or computed from the returns. */
async function tableOf(
  s: SnapshotRef,
  subject: Subject,
  bench: BenchmarkResult | undefined,
  period: number | undefined,
  stored?: MetricRow[],
): Promise<MetricRow[]> {
  const { returns } = subject;
  if (returns.dates.length === 0) return [];
  const storedRows = async () =>
    stored ?? (await access.storedMetrics(s, subject.kind, [subject.id], bench?.id ?? null))[0];
  let sliced = returns;
  let benchReturns = bench ? alignBenchmark(returns.dates, bench.levels) : undefined;
  if (period !== undefined) {
    sliced = sliceByPeriod(returns, period);
    if (sliced.dates.length === returns.dates.length) {
      const rows = await storedRows();
      if (rows) return rows;
    }
    if (benchReturns) benchReturns = sliceByPeriod(benchReturns, period);
  } else {
    const rows = await storedRows();
    if (rows) return rows;
  }
  return metricRows(
    sliced,
    subject.column,
    bench && benchReturns ? { name: bench.name, returns: benchReturns } : undefined,
  );
}

/** The performance series of a type; with a benchmark, its series follows on the subject's dates. */
export function seriesOf(
  type: SeriesType,
  name: string,
  returns: ReturnSeries,
  bench: BenchmarkResult | undefined,
): SeriesObject[] {
  if (returns.dates.length === 0) return [{ name, data: [] }];
  return performanceSeries(
    type,
    { name, returns },
    bench ? { name: bench.name, returns: alignBenchmark(returns.dates, bench.levels) } : undefined,
  );
}
