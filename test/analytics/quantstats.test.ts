// Every metric row, every label, against QuantStats 0.0.62.
//
// How the fixture was produced (the script lives outside the repo; only its output is committed):
// QuantStats at git tag 0.0.62 (unmodified source on PYTHONPATH, empty stand-ins for its yfinance
// and IPython imports) on Debian's pandas 1.5.3 / numpy 1.24 / scipy, called as
//   qs.reports.metrics(returns, benchmark, rf=0.0, display=False, mode="full", internal=True,
//                      compounded=True, periods_per_year=252)
// with two run-time patches where the contract (§6) differs from 0.0.62: `stats.cagr` over calendar
// days / 365 (0.0.62 divides by 252), and `stats.conditional_value_at_risk` = mean of the returns
// below the VaR, per column (0.0.62 falls back to the VaR itself). See the fixture's `producedBy`,
// `call` and `patches`. Every fixture series has returns below its VaR, so the patch does not
// change a value here; the per-series fallback the project now follows is in cvar-fallback.test.ts.
//
// Fixture series (numpy default_rng(20261122), Student-t(4) daily returns scaled to a mean/sd, on
// business days, first return 0.0; the exact values are stored in each case):
//   long           800 days (2019-01-02..2022-01-25, ~3.1 years), mean 0.06%, sd 1.2%
//   long+benchmark the same against 0.6 × long + 0.4 × an independent series
//   short          100 days (< 126), mean 0.1%, sd 2%
//   never-recovered 200 days of +0.4% then 400 of −0.15%, plus N(0, 0.6%) noise: ends in its drawdown
//   never-recovered+benchmark  against an independent series
//   zeros          60 days of 0.0
//   decade(+benchmark)  ~11 years ending Friday 2024-05-31 with ~4% of days dropped as holidays
//                  (every trailing window, month-end clamps: 3M back = 2024-02-29, 35 months = 2021-06-30)
//   late-start+benchmark  subject flat (0.0) for its first 25 days, benchmark moving from day 2:
//                  QuantStats' match_dates zeroes both before the later first non-zero return
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { metricRows } from "../../pipeline/analytics/index.ts";

type Table = Record<string, string[]>;
interface Case {
  name: string;
  dates: string[];
  returns: number[];
  benchmark?: number[];
  columns: string[];
  /** One-column table (no benchmark). */
  expected?: Table;
  /** Two-column table as 0.0.62 prints it, and each series' one-column table (after match_dates). */
  table?: Table;
  alone?: { Strategy: Table; Benchmark: Table };
  /** The contract's format of Cumulative Return and Risk of Ruin, from QuantStats' own functions. */
  contract: Record<string, Record<string, string>>;
}
const fixture = JSON.parse(readFileSync(join(import.meta.dirname, "fixtures/quantstats-0.0.62.json"), "utf8")) as {
  cases: Case[];
};

/** QuantStats' table keys drop the trailing space and a trailing " %". */
const oracleKey = (label: string) => label.replace(/ %$/, "").trim();

/**
 * Single-series rows that 0.0.62's two-column frame (strategy + benchmark) computes wrongly, so with
 * a benchmark these come from each series' own one-column table (a subject's numbers must not change
 * when a benchmark is added):
 * - benchmark column only: Smart Sharpe / Smart Sortino (/√2) use `autocorr_penalty`, which takes the
 *   frame's first column, i.e. the strategy's autocorrelation; Omega takes `.sum().values[0]`, the
 *   strategy's gains and losses, for both columns.
 * - both columns: avg_win / avg_loss do `returns[returns > 0].dropna()` on the frame, keeping only
 *   days when both columns win (lose), which changes Payoff Ratio, Kelly, CPC Index and Avg. Up/Down
 *   Month; the outlier ratios take `returns.quantile(q).mean()`, the mean of both columns' quantiles.
 */
const FRAME_LEAKS: Record<string, "Benchmark" | "both"> = {
  "Smart Sharpe": "Benchmark",
  "Smart Sortino": "Benchmark",
  "Smart Sortino/√2": "Benchmark",
  Omega: "Benchmark",
  "Payoff Ratio": "both",
  "Kelly Criterion": "both",
  "CPC Index": "both",
  "Avg. Up Month": "both",
  "Avg. Down Month": "both",
  "Outlier Win Ratio": "both",
  "Outlier Loss Ratio": "both",
};

/**
 * For a series with no drawdown at all (zeros) 0.0.62 prints "%" for Max Drawdown (a blank it never
 * filled) and leaves the Avg. Drawdown row out; the contract lists every row: the max drawdown is
 * 0.0% and the average of no drawdowns is "-".
 */
const NO_DRAWDOWN: Record<string, string> = { "Max Drawdown": "0.0%", "Avg. Drawdown": "-" };

/** QuantStats' value for one label and column, or the contract's where they differ. */
function want(c: Case, key: string, column: "Strategy" | "Benchmark"): string | undefined {
  const fixed = c.contract[column]?.[key];
  if (fixed !== undefined) return fixed;
  if (c.name === "zeros" && key in NO_DRAWDOWN) return NO_DRAWDOWN[key];
  if (!c.table) return c.expected![key]?.[c.columns.indexOf(column)];
  const leak = FRAME_LEAKS[key];
  if (leak === "both" || leak === column) return c.alone![column][key]?.[0];
  return c.table[key]?.[c.columns.indexOf(column)];
}

describe("metric rows match QuantStats 0.0.62", () => {
  for (const c of fixture.cases) {
    it(c.name, () => {
      const subject = { dates: c.dates, returns: Float64Array.from(c.returns) };
      const bench = c.benchmark
        ? { name: "Benchmark", returns: { dates: c.dates, returns: Float64Array.from(c.benchmark) } }
        : undefined;
      const rows = metricRows(subject, "Strategy", bench);
      const mismatches: string[] = [];
      for (const row of rows) {
        const key = oracleKey(row.metric);
        for (const column of bench ? (["Strategy", "Benchmark"] as const) : (["Strategy"] as const)) {
          const w = want(c, key, column);
          if (w === undefined) mismatches.push(`${key}: QuantStats has no value`);
          else if (row[column] !== w) mismatches.push(`${key} (${column}): ${row[column]} vs ${w}`);
        }
      }
      expect(mismatches).toEqual([]);
      // Every QuantStats row but "Time in Market" (not in the contract) is one of ours.
      const printed = Object.keys(c.table ?? c.expected!).filter((k) => k !== "Time in Market");
      const ours = rows.map((r) => oracleKey(r.metric));
      expect(printed.filter((k) => !ours.includes(k))).toEqual([]);
    });
  }

  it("lists only frame leaks that really change a printed value", () => {
    // Each FRAME_LEAKS entry differs between the two-column table and the series alone in some case,
    // so the list is evidence, not a blanket exemption.
    const paired = fixture.cases.filter((c) => c.table);
    for (const [key, scope] of Object.entries(FRAME_LEAKS)) {
      const columns = scope === "both" ? (["Strategy", "Benchmark"] as const) : ([scope] as const);
      const differs = paired.some((c) =>
        columns.some((col) => c.table![key][c.columns.indexOf(col)] !== c.alone![col][key][0]),
      );
      expect(differs, key).toBe(true);
    }
  });

  it("leaves every other single-series row of the two-column table as each series alone gives it", () => {
    for (const c of fixture.cases.filter((x) => x.table)) {
      for (const [key, values] of Object.entries(c.table!)) {
        if (key in FRAME_LEAKS || !(key in c.alone!.Strategy)) continue;
        for (const col of ["Strategy", "Benchmark"] as const)
          expect(values[c.columns.indexOf(col)], `${c.name} ${key} ${col}`).toBe(c.alone![col][key][0]);
      }
    }
  });
});

describe("rows, labels and benchmark column", () => {
  const c = fixture.cases.find((x) => x.name === "long+benchmark")!;
  const rows = metricRows({ dates: c.dates, returns: Float64Array.from(c.returns) }, "AAPL", {
    name: "S&P 500",
    returns: { dates: c.dates, returns: Float64Array.from(c.benchmark!) },
  });
  it("keys the subject column by `column` and the benchmark column by its name", () => {
    expect(Object.keys(rows[0])).toEqual(["metric", "AAPL", "S&P 500"]);
    expect(rows.find((r) => r.metric === "Cumulative Return ")).toEqual({
      metric: "Cumulative Return ",
      AAPL: "43.14%",
      "S&P 500": "41.47%",
    });
  });
  it("writes - in the benchmark column for Beta, Alpha, Correlation, Treynor Ratio", () => {
    for (const label of ["Beta", "Alpha", "Correlation", "Treynor Ratio"])
      expect(rows.find((r) => r.metric === label)!["S&P 500"]).toBe("-");
  });
  it("has the contract's labels in order, with the trailing spaces", () => {
    // Contract §6 verbatim ("␠" = one trailing space).
    const contract =
      "Start Period, End Period, Risk-Free Rate␠, Cumulative Return␠, CAGR﹪, Sharpe, Prob. Sharpe Ratio␠, Smart " +
      "Sharpe, Sortino, Smart Sortino, Sortino/√2, Smart Sortino/√2, Omega, Max Drawdown␠, Longest DD Days, " +
      "Volatility (ann.)␠, R^2, Information Ratio, Calmar, Skew, Kurtosis, Expected Daily %, Expected Monthly %, " +
      "Expected Yearly %, Kelly Criterion␠, Risk of Ruin␠, Daily Value-at-Risk␠, Expected Shortfall (cVaR)␠, Max " +
      "Consecutive Wins, Max Consecutive Losses, Gain/Pain Ratio, Gain/Pain (1M), Payoff Ratio, Profit Factor, " +
      "Common Sense Ratio, CPC Index, Tail Ratio, Outlier Win Ratio, Outlier Loss Ratio, MTD␠, 3M␠, 6M␠, YTD␠, 1Y␠, " +
      "3Y (ann.)␠, 5Y (ann.)␠, 10Y (ann.)␠, All-time (ann.)␠, Best Day␠, Worst Day␠, Best Month␠, Worst Month␠, Best " +
      "Year␠, Worst Year␠, Avg. Drawdown␠, Avg. Drawdown Days, Recovery Factor, Ulcer Index, Serenity Index, Avg. Up " +
      "Month␠, Avg. Down Month␠, Win Days %, Win Month %, Win Quarter %, Win Year %, Beta, " +
      "Alpha, Correlation, Treynor Ratio";
    const labels = contract.split(", ").map((l) => l.replace("␠", " "));
    expect(rows.map((r) => r.metric)).toEqual(labels);
    const plain = metricRows({ dates: c.dates, returns: Float64Array.from(c.returns) }, "AAPL");
    const benchOnly = new Set(["R^2", "Information Ratio", "Beta", "Alpha", "Correlation", "Treynor Ratio"]);
    expect(plain.map((r) => r.metric)).toEqual(labels.filter((l) => !benchOnly.has(l)));
  });
});
