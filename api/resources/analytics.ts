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
  sliceByWindow,
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

/** Which returns a read covers: `period` years back from the latest date, or the window [start, end]. */
export interface Range {
  period?: number;
  start?: string;
  end?: string;
}

/** The returns of `r` within the range (the series itself when it covers them all). */
const cut = (r: ReturnSeries, range: Range) =>
  range.period !== undefined ? sliceByPeriod(r, range.period) : sliceByWindow(r, range.start, range.end);

/**
 * Metric rows: the stored full-period rows; for a `period` or a window, computed over those
 * returns with the same functions (a range covering the whole history is the stored answer).
 * Empty history → []. A portfolio with trading costs gets the average annual turnover row last.
 */
export async function metricsOf(
  s: SnapshotRef,
  subject: Subject,
  bench: BenchmarkResult | undefined,
  range: Range,
  stored?: MetricRow[],
): Promise<MetricRow[]> {
  const { returns } = subject;
  if (returns.dates.length === 0) return [];
  const sliced = cut(returns, range);
  const rows = await tableOf(s, subject, sliced, bench, range, stored);
  if (!subject.turnover || rows.length === 0) return rows;
  return [
    ...rows,
    turnoverRow(avgAnnualTurnover(sliced.dates, subject.turnover), subject.column, bench?.name) as MetricRow,
  ];
}

/** The metric table of contract §6 over `sliced`: stored when it is the whole history, else computed. */
async function tableOf(
  s: SnapshotRef,
  subject: Subject,
  sliced: ReturnSeries,
  bench: BenchmarkResult | undefined,
  range: Range,
  stored?: MetricRow[],
): Promise<MetricRow[]> {
  const { returns } = subject;
  if (sliced.dates.length === returns.dates.length) {
    const rows = stored ?? (await access.storedMetrics(s, subject.kind, [subject.id], bench?.id ?? null))[0];
    if (rows) return rows;
  }
  if (sliced.dates.length === 0) return [];
  // The benchmark is aligned on the whole history, then cut like the subject: its first return in
  // the range is also the one from the close before it.
  const benchReturns = bench ? cut(alignBenchmark(returns.dates, bench.levels), range) : undefined;
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
  range: Range = {},
): SeriesObject[] {
  const sliced = cut(returns, range);
  if (sliced.dates.length === 0) return [{ name, data: [] }];
  return performanceSeries(
    type,
    { name, returns: sliced },
    bench ? { name: bench.name, returns: cut(alignBenchmark(returns.dates, bench.levels), range) } : undefined,
  );
}
