// The metric rows of contract §6, in order, with exact labels (trailing spaces are part of them)
// and formats. Each row names its metric function once; subject and benchmark columns share it.
import type { MetricRow, ReturnSeries } from "../../types.ts";
import { formatMetric, type MetricFormat } from "../format.ts";
import * as bm from "./benchmark.ts";
import { SeriesContext } from "./context.ts";
import * as dd from "./drawdown.ts";
import * as ra from "./ratios.ts";
import * as rt from "./returns.ts";
import * as rk from "./risk.ts";

type Row =
  | { label: string; kind: "start" | "end" | "rf" | "cum" }
  | { label: string; kind: "one"; fmt: MetricFormat; f: (c: SeriesContext) => number }
  | { label: string; kind: "pair"; fmt: MetricFormat; f: (p: bm.Pair) => number; benchDash: boolean };

const P = (label: string, f: (c: SeriesContext) => number): Row => ({ label, kind: "one", fmt: "percent", f });
const N = (label: string, f: (c: SeriesContext) => number): Row => ({ label, kind: "one", fmt: "number", f });
const I = (label: string, f: (c: SeriesContext) => number): Row => ({ label, kind: "one", fmt: "int", f });

const HEAD: Row[] = [
  { label: "Start Period", kind: "start" },
  { label: "End Period", kind: "end" },
  { label: "Risk-Free Rate ", kind: "rf" },
  { label: "Cumulative Return ", kind: "cum" },
  P("CAGR﹪", rt.cagr),
  N("Sharpe", rk.sharpe),
  P("Prob. Sharpe Ratio ", rk.probSharpe),
  N("Smart Sharpe", rk.smartSharpe),
  N("Sortino", rk.sortino),
  N("Smart Sortino", rk.smartSortino),
  N("Sortino/√2", (c) => rk.sortino(c) / Math.SQRT2),
  N("Smart Sortino/√2", (c) => rk.smartSortino(c) / Math.SQRT2),
  N("Omega", rk.omega),
  P("Max Drawdown ", dd.maxDrawdown),
  I("Longest DD Days", dd.longestDdDays),
  P("Volatility (ann.) ", rk.volatility),
];
const WITH_BENCHMARK_MID: Row[] = [
  { label: "R^2", kind: "pair", f: bm.rSquared, fmt: "number", benchDash: false },
  { label: "Information Ratio", kind: "pair", f: bm.informationRatio, fmt: "number", benchDash: false },
];
const BODY: Row[] = [
  N("Calmar", dd.calmar),
  N("Skew", rk.skewness),
  N("Kurtosis", rk.kurt),
  P("Expected Daily %", rt.expectedDaily),
  P("Expected Monthly %", rt.expectedMonthly),
  P("Expected Yearly %", rt.expectedYearly),
  P("Kelly Criterion ", rk.kelly),
  P("Risk of Ruin ", rk.riskOfRuin),
  P("Daily Value-at-Risk ", rk.dailyVaR),
  P("Expected Shortfall (cVaR) ", rk.cVaR),
  I("Max Consecutive Wins", ra.consecutiveWins),
  I("Max Consecutive Losses", ra.consecutiveLosses),
  N("Gain/Pain Ratio", ra.gainPain),
  N("Gain/Pain (1M)", ra.gainPainMonthly),
  N("Payoff Ratio", ra.payoffRatio),
  N("Profit Factor", ra.profitFactor),
  N("Common Sense Ratio", ra.commonSenseRatio),
  N("CPC Index", ra.cpcIndex),
  N("Tail Ratio", ra.tailRatio),
  N("Outlier Win Ratio", ra.outlierWinRatio),
  N("Outlier Loss Ratio", ra.outlierLossRatio),
  P("MTD ", rt.mtd),
  P("3M ", rt.trailing(3)),
  P("6M ", rt.trailing(6)),
  P("YTD ", rt.ytd),
  P("1Y ", rt.trailing(12)),
  P("3Y (ann.) ", rt.trailingCagr(35)),
  P("5Y (ann.) ", rt.trailingCagr(59)),
  P("10Y (ann.) ", rt.trailingCagr(120)),
  P("All-time (ann.) ", rt.cagr),
  P("Best Day ", rt.bestDay),
  P("Worst Day ", rt.worstDay),
  P("Best Month ", rt.bestMonth),
  P("Worst Month ", rt.worstMonth),
  P("Best Year ", rt.bestYear),
  P("Worst Year ", rt.worstYear),
  P("Avg. Drawdown ", dd.avgDrawdown),
  I("Avg. Drawdown Days", dd.avgDrawdownDays),
  N("Recovery Factor", dd.recoveryFactor),
  N("Ulcer Index", dd.ulcerIndex),
  N("Serenity Index", dd.serenityIndex),
  P("Avg. Up Month ", ra.avgUpMonth),
  P("Avg. Down Month ", ra.avgDownMonth),
  P("Win Days %", ra.winDays),
  P("Win Month %", ra.winMonths),
  P("Win Quarter %", ra.winQuarters),
  P("Win Year %", ra.winYears),
];
const WITH_BENCHMARK_TAIL: Row[] = [
  { label: "Beta", kind: "pair", f: bm.beta, fmt: "number", benchDash: true },
  { label: "Alpha", kind: "pair", f: bm.alpha, fmt: "number", benchDash: true },
  { label: "Correlation", kind: "pair", f: bm.correlationOf, fmt: "percent", benchDash: true },
  { label: "Treynor Ratio", kind: "pair", f: bm.treynor, fmt: "percent", benchDash: true },
];

/** A cell's published text and, where it is a number, the number behind it (null otherwise). */
type Cell = [display: string, value: number | null];
const num = (fmt: MetricFormat, v: number): Cell => [formatMetric(fmt, v), Number.isNaN(v) ? null : v];

function cell(row: Row, c: SeriesContext, pair?: bm.Pair, isBenchmark = false): Cell {
  switch (row.kind) {
    case "start":
      return [c.dates[0] ?? "-", null];
    case "end":
      return [c.dates[c.n - 1] ?? "-", null];
    case "rf":
      return ["0.0%", 0];
    case "cum":
      return c.remember(row, () => num("cumulative", rt.cumulativeReturn(c)));
    case "pair":
      // R² and the information ratio are one number in both columns: computed once
      return row.benchDash && isBenchmark
        ? ["-", null]
        : num(
            row.fmt,
            pair!.memo(row.label, () => row.f(pair!)),
          );
    case "one":
      return c.remember(row, () => num(row.fmt, row.f(c)));
  }
}

/** `r` with its returns before `from` set to 0: `r` itself when they already are (+0). */
function zeroedBefore(r: Float64Array, from: number): Float64Array {
  for (let i = 0; i < from; i++) if (!Object.is(r[i], 0)) return r.slice().fill(0, 0, from);
  return r;
}

/** The metric table in columns: labels in order, the subject's cells, the benchmark's (when given). */
export interface MetricCells {
  labels: string[];
  subject: Cell[];
  benchmark: Cell[] | null;
}

const PLAIN_ROWS = [...HEAD, ...BODY];
const PLAIN_LABELS = PLAIN_ROWS.map((r) => r.label);
const BENCHMARK_ROWS = [...HEAD, ...WITH_BENCHMARK_MID, ...BODY, ...WITH_BENCHMARK_TAIL];
const BENCHMARK_LABELS = BENCHMARK_ROWS.map((r) => r.label);

export function metricCells(subject: ReturnSeries, benchmark?: ReturnSeries): MetricCells {
  if (!benchmark) {
    const c = SeriesContext.of(subject);
    return { labels: [...PLAIN_LABELS], subject: PLAIN_ROWS.map((row) => cell(row, c)), benchmark: null };
  }
  const from = bm.matchStart(subject.returns, benchmark.returns);
  // Usually nothing changes (a series starts with 0): the contexts, and their cells, are then
  // the plain table's and, for the benchmark, the one every stock of these dates shares.
  const s = SeriesContext.of({ dates: subject.dates, returns: zeroedBefore(subject.returns, from) });
  const b = SeriesContext.of({ dates: subject.dates, returns: zeroedBefore(benchmark.returns, from) });
  const pair = new bm.Pair(s, b);
  return {
    labels: [...BENCHMARK_LABELS],
    subject: BENCHMARK_ROWS.map((row) => cell(row, s, pair)),
    benchmark: BENCHMARK_ROWS.map((row) => cell(row, b, pair, true)),
  };
}

/** Rows `{metric, <column>: text[, <benchmark name>: text]}` from the table's labels and texts. */
export function metricRowsOf(
  labels: string[],
  column: string,
  subject: string[],
  benchmarkName?: string,
  benchmark?: string[],
): MetricRow[] {
  if (benchmarkName === undefined || !benchmark)
    return labels.map((label, i) => ({ metric: label, [column]: subject[i] }) as MetricRow);
  return labels.map(
    (label, i) => ({ metric: label, [column]: subject[i], [benchmarkName]: benchmark[i] }) as MetricRow,
  );
}

export function metricRows(
  subject: ReturnSeries,
  column: string,
  benchmark?: { name: string; returns: ReturnSeries },
): MetricRow[] {
  const t = metricCells(subject, benchmark?.returns);
  return metricRowsOf(
    t.labels,
    column,
    t.subject.map((c) => c[0]),
    benchmark?.name,
    t.benchmark?.map((c) => c[0]),
  );
}
