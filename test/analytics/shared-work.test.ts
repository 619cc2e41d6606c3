// A metric partition computes the tables of many stocks that share one dates array and one aligned
// benchmark; the shared work (a stock's single-series cells across its tables, a benchmark's
// column across stocks) must give exactly the cells of each table computed on its own arrays.
import { describe, expect, it } from "vitest";
import { alignBenchmark, metricCells } from "../../pipeline/analytics/index.ts";
import type { LevelSeries, ReturnSeries } from "../../pipeline/types.ts";

// A deterministic series of returns (no library: a linear congruential generator).
function returns(seed: number, n: number, leadingZeros = 1): Float64Array {
  let x = seed;
  const r = new Float64Array(n);
  for (let i = leadingZeros; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    r[i] = (x / 2147483648 - 0.5) * 0.04;
  }
  return r;
}

const days = (n: number) =>
  Array.from({ length: n }, (_, i) => new Date(Date.UTC(2015, 0, 2) + i * 86_400_000).toISOString().slice(0, 10));

/** The same series in arrays nothing else holds: no shared work can apply. */
const fresh = (s: ReturnSeries): ReturnSeries => ({ dates: [...s.dates], returns: Float64Array.from(s.returns) });

describe("shared metric work", () => {
  const n = 900;
  const dates = days(n);
  const levels: LevelSeries = {
    dates: days(n + 10).slice(5),
    levels: Float64Array.from(returns(99, n + 5, 0), (r, i) => 100 * (1 + r) + i * 0.01),
  };

  it("gives each stock the cells of its tables computed alone, whatever the sharing", () => {
    const bench = alignBenchmark(dates, levels);
    // The aligned benchmark is one object for every stock of these dates.
    expect(alignBenchmark(dates, levels)).toBe(bench);
    const stocks: ReturnSeries[] = [
      { dates, returns: returns(1, n) }, // starts with 0, like every stock's first day: everything shared
      { dates, returns: returns(2, n) },
      { dates, returns: returns(3, n, 0) }, // a non-zero first return: the benchmark table zeroes it
      { dates, returns: Float64Array.from(returns(4, n), (x, i) => (i === 0 ? -0 : x)) }, // −0 is not +0: not shared
      { dates: dates.slice(100), returns: returns(5, n - 100) }, // other dates: their own benchmark
      { dates: dates.slice(50, n - 50), returns: returns(6, n - 100) }, // as many dates, other ones
    ];
    for (const s of stocks) {
      // The expected tables: every array fresh, the benchmark aligned from a copy of its levels.
      const levelsCopy: LevelSeries = { dates: [...levels.dates], levels: Float64Array.from(levels.levels) };
      const plain = metricCells(s);
      const withBench = metricCells(s, alignBenchmark(s.dates, levels));
      const alone = fresh(s);
      expect(plain).toEqual(metricCells(alone));
      expect(withBench).toEqual(metricCells(alone, alignBenchmark(alone.dates, levelsCopy)));
    }
    // Hand-checked anchor: the plain table's first rows are the series' own dates and 0% rate.
    expect(metricCells(stocks[0]).subject.slice(0, 3)).toEqual([
      [dates[0], null],
      [dates[n - 1], null],
      ["0.0%", 0],
    ]);
  });

  it("a later subject's table is not served an earlier one's cells", () => {
    const a: ReturnSeries = { dates, returns: returns(11, n) };
    const b: ReturnSeries = { dates, returns: returns(12, n) };
    const ta = metricCells(a);
    const tb = metricCells(b);
    const sharpe = ta.labels.indexOf("Sharpe");
    expect(ta.subject[sharpe]).not.toEqual(tb.subject[sharpe]);
    expect(tb).toEqual(metricCells(fresh(b)));
  });
});
