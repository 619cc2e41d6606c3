// The nine series types on hand-computed small cases (contract §4's table).
import { describe, expect, it } from "vitest";
import { performanceSeries } from "../../pipeline/analytics/index.ts";
import { rollingBeta, rollingMeanStd } from "../../pipeline/analytics/series/rolling.ts";
import type { ReturnSeries } from "../../pipeline/types.ts";

const S = (dates: string[], r: number[]): { name: string; returns: ReturnSeries } => ({
  name: "X",
  returns: { dates, returns: Float64Array.from(r) },
});
const close = (a: number, b: number) => expect(a).toBeCloseTo(b, 12);

describe("value series", () => {
  const x = S(["2023-12-28", "2023-12-29", "2024-01-02", "2024-01-03"], [0, 0.1, -0.5, 0.2]);
  it("cumulative_return compounds from 0.0", () => {
    const [s] = performanceSeries("cumulative_return", x);
    // 1.1 − 1; 1.1 × 0.5 − 1 = −0.45; 0.55 × 1.2 − 1 = −0.34
    expect(s.data.map((d) => d.date)).toEqual(x.returns.dates);
    [0, 0.1, -0.45, -0.34].forEach((v, i) => {
      close(s.data[i].return as number, v);
    });
  });
  it("drawdown is value / running peak − 1", () => {
    const [s] = performanceSeries("drawdown", x);
    // values 1, 1.1, 0.55, 0.66; peaks 1, 1.1, 1.1, 1.1
    [0, 0, -0.5, -0.4].forEach((v, i) => {
      close(s.data[i].return as number, v);
    });
  });
  it("yearly_returns compounds per calendar year, dated 12-31", () => {
    const [s] = performanceSeries("yearly_returns", x);
    expect(s.data.map((d) => d.date)).toEqual(["2023-12-31", "2024-12-31"]);
    close(s.data[0].return as number, 0.1);
    close(s.data[1].return as number, 0.5 * 1.2 - 1); // −0.4
  });
  it("monthly_heatmap compounds per month, dated the first", () => {
    const [s] = performanceSeries("monthly_heatmap", x);
    expect(s.data.map(({ date, year, month }) => [date, year, month])).toEqual([
      ["2023-12-01", 2023, 12],
      ["2024-01-01", 2024, 1],
    ]);
    close(s.data[1].return as number, -0.4);
  });
});

describe("rolling series", () => {
  const n = 130;
  const dates = Array.from({ length: n }, (_, i) => new Date(Date.UTC(2024, 0, 1 + i)).toISOString().slice(0, 10));
  const r = Array.from({ length: n }, (_, i) => ((i * 7919) % 13) / 1000 - 0.006);
  it("rolling_volatility has n − 125 points from index 125, std × √252", () => {
    const [s] = performanceSeries("rolling_volatility", S(dates, r));
    expect(s.window).toBe(126);
    expect(s.data).toHaveLength(n - 125);
    expect(s.data[0].date).toBe(dates[125]);
    const w = r.slice(0, 126);
    const m = w.reduce((a, b) => a + b, 0) / 126;
    const sd = Math.sqrt(w.reduce((a, b) => a + (b - m) ** 2, 0) / 125);
    close(s.data[0].return as number, sd * Math.sqrt(252));
  });
  it("rolling_sharpe is mean / std × √252 over the window", () => {
    const [s] = performanceSeries("rolling_sharpe", S(dates, r));
    const w = r.slice(4, 130);
    const m = w.reduce((a, b) => a + b, 0) / 126;
    const sd = Math.sqrt(w.reduce((a, b) => a + (b - m) ** 2, 0) / 125);
    close(s.data[4].return as number, (m / sd) * Math.sqrt(252));
  });
  it("rolling_beta needs a benchmark and gives the subject's 126 and 252 windows only", () => {
    expect(() => performanceSeries("rolling_beta", S(dates, r))).toThrow(/benchmark/);
    // The subject is exactly 2 × the benchmark: every window's beta is 2.
    const b = S(dates, r);
    const twice = S(
      dates,
      r.map((v) => 2 * v),
    );
    const out = performanceSeries("rolling_beta", twice, b);
    expect(out.map((s) => [s.name, s.window, s.data.length])).toEqual([
      ["X", 126, 5],
      ["X", 252, 0],
    ]);
    for (const d of out[0].data) close(d.return as number, 2);
  });
  it("running sums agree with a naive recomputation over a long noisy series", () => {
    let seed = 7;
    const rnd = () => {
      seed = (seed * 16807) % 2147483647;
      return (seed / 2147483647 - 0.5) * 0.05 + 0.3;
    };
    const x = Float64Array.from({ length: 10_000 }, rnd);
    const y = Float64Array.from({ length: 10_000 }, rnd);
    const { std } = rollingMeanStd(x, 126);
    const beta = rollingBeta(x, y, 126);
    for (const k of [0, 4321, 9874]) {
      const wx = x.slice(k, k + 126),
        wy = y.slice(k, k + 126);
      const mx = wx.reduce((a, b) => a + b) / 126,
        my = wy.reduce((a, b) => a + b) / 126;
      const sx = Math.sqrt(wx.reduce((a, b) => a + (b - mx) ** 2, 0) / 125);
      const cov = wx.reduce((a, b, i) => a + (b - mx) * (wy[i] - my), 0) / 125;
      const vy = wy.reduce((a, b) => a + (b - my) ** 2, 0) / 125;
      expect(std[k]).toBeCloseTo(sx, 10);
      expect(beta[k]).toBeCloseTo(cov / vy, 8);
    }
  });
});

describe("distribution series", () => {
  // Monthly returns: Jan +10%, Feb −10%, Mar +20%, Apr 0% (one day each).
  const x = S(["2024-01-15", "2024-02-15", "2024-03-15", "2024-04-15"], [0.1, -0.1, 0.2, 0]);
  it("histogram: monthly returns in 20 equal bins from min to max, counts summing to the months", () => {
    const [s] = performanceSeries("histogram", x);
    expect(s.data.map((d) => d.date)).toEqual(["2024-01-01", "2024-02-01", "2024-03-01", "2024-04-01"]);
    expect(s.bins).toHaveLength(20);
    // width (0.2 − (−0.1)) / 20 = 0.015: −0.1 → bin 0; 0 → bin 6 (0.1 / 0.015 = 6.67); 0.1 → bin 13; 0.2 → last bin.
    const counts = s.bins!.map((b) => b.count);
    expect(counts.reduce((a, b) => a + b)).toBe(4);
    expect([counts[0], counts[6], counts[13], counts[19]]).toEqual([1, 1, 1, 1]);
    close(s.bins![0].start, -0.1);
    close(s.bins![19].end, 0.2);
  });
  it("histogram with a benchmark shares the edges", () => {
    const b = { name: "B", returns: { dates: x.returns.dates, returns: Float64Array.from([0.3, 0, 0, 0]) } };
    const [s, t] = performanceSeries("histogram", x, b);
    expect(t.name).toBe("B");
    expect(s.bins!.map((k) => k.start)).toEqual(t.bins!.map((k) => k.start));
    close(s.bins![19].end, 0.3);
  });
  it("boxplot: five compounded periods with Tukey whiskers", () => {
    const [s] = performanceSeries("boxplot", x);
    expect(s.data.map((d) => d.period)).toEqual(["Daily", "Weekly", "Monthly", "Quarterly", "Yearly"]);
    const daily = s.data[0];
    // sorted −0.1, 0, 0.1, 0.2: q1 at h = 0.75 → −0.025; median 0.05; q3 at h = 2.25 → 0.125; IQR 0.15,
    // fences −0.25 and 0.35: whiskers are the min and max.
    expect(daily).toMatchObject({ min: -0.1, max: 0.2, count: 4, whiskerLow: -0.1, whiskerHigh: 0.2 });
    close(daily.q1 as number, -0.025);
    close(daily.median as number, 0.05);
    close(daily.q3 as number, 0.125);
    close(daily.mean as number, 0.05);
    // Quarterly: Q1 = 1.1 × 0.9 × 1.2 − 1 = 0.188, Q2 = 0.
    expect(s.data[3].count).toBe(2);
    close(s.data[3].max as number, 0.188);
  });
});

describe("edge cases", () => {
  const days = (n: number) =>
    Array.from({ length: n }, (_, i) => new Date(Date.UTC(2024, 0, 1 + i)).toISOString().slice(0, 10));
  it("boxplot whiskers stop at the most extreme points inside the fences", () => {
    // Daily 0, 0.01, 0.02, 0.03, 1.0: q1 = 0.01, q3 = 0.03 (type 7: h = 1 and 3), IQR 0.02,
    // fences −0.02 and 0.06: whiskerHigh 0.03 (1.0 is an outlier), whiskerLow 0.
    const [s] = performanceSeries("boxplot", S(days(5), [0, 0.01, 0.02, 0.03, 1]));
    const d = s.data[0];
    close(d.q1 as number, 0.01);
    close(d.q3 as number, 0.03);
    expect(d.whiskerHigh).toBe(0.03);
    expect(d.whiskerLow).toBe(0);
    expect(d.max).toBe(1);
    // Weekly (weeks ending Monday): 2024-01-01 is a Monday, so week 1 = [0], week 2 = the other four.
    expect(s.data[1].count).toBe(2);
    close(s.data[1].max as number, 1.01 * 1.02 * 1.03 * 2 - 1);
  });
  it("a window of identical returns has zero volatility and no Sharpe", () => {
    // 126 days of exactly 0.004: std is 0 (not rounding noise), so Sharpe = 0.004 / 0 is not finite → null.
    const x = S(days(130), [...new Array(126).fill(0.004), 0.01, 0.02, 0.03, 0.04]);
    const [v] = performanceSeries("rolling_volatility", x);
    const [sh] = performanceSeries("rolling_sharpe", x);
    expect(v.data[0].return).toBe(0);
    expect(sh.data[0].return).toBeNull();
    expect(v.data[1].return).toBeGreaterThan(0);
  });
  it("a benchmark's rolling series follows on the same dates; rolling_beta has none for it", () => {
    const a = S(
      days(200),
      Array.from({ length: 200 }, (_, i) => Math.sin(i) / 100),
    );
    const b = {
      name: "B",
      returns: {
        dates: a.returns.dates,
        returns: Float64Array.from({ length: 200 }, (_, i) => Math.cos(i * 1.3) / 100),
      },
    };
    const out = performanceSeries("rolling_volatility", a, b);
    expect(out.map((s) => [s.name, s.window, s.data.length])).toEqual([
      ["X", 126, 75],
      ["B", 126, 75],
    ]);
    expect(out[1].data.map((d) => d.date)).toEqual(out[0].data.map((d) => d.date));
    expect(performanceSeries("rolling_beta", a, b).map((s) => s.name)).toEqual(["X", "X"]);
  });
  it("rolling beta on non-trivial numbers: cov / var of the benchmark, by hand", () => {
    // x = 1, 2, 4, 3; y = 1, 3, 2, 5 over a window of 4 (windows must fit, so call the kernel directly):
    // means 2.5 and 2.75; Σdx·dy = (−1.5)(−1.75) + (−0.5)(0.25) + (1.5)(−0.75) + (0.5)(2.25) = 2.5;
    // Σdy² = 3.0625 + 0.0625 + 0.5625 + 5.0625 = 8.75; beta = 2.5 / 8.75 = 0.285714…
    const beta = rollingBeta(Float64Array.from([1, 2, 4, 3]), Float64Array.from([1, 3, 2, 5]), 4);
    close(beta[0], 2.5 / 8.75);
  });
  it("running sums stay exact on price-like levels (large mean, small spread) over 20,000 steps", () => {
    let seed = 11;
    const rnd = () => {
      seed = (seed * 16807) % 2147483647;
      return seed / 2147483647;
    };
    const x = Float64Array.from({ length: 20_000 }, (_, i) => 100 + i / 100 + rnd() * 0.01);
    const { mean, std } = rollingMeanStd(x, 252);
    for (const k of [0, 1023, 1024, 7777, 19_748]) {
      const w = x.slice(k, k + 252);
      const m = w.reduce((a, b) => a + b) / 252;
      const sd = Math.sqrt(w.reduce((a, b) => a + (b - m) ** 2, 0) / 251);
      expect(mean[k]).toBeCloseTo(m, 9);
      expect(Math.abs(std[k] - sd) / sd).toBeLessThan(1e-7);
    }
  });
  it("histogram puts a value on an edge in the bin that starts there", () => {
    // Months: 0, 1/16, …, 20/16 (21 values, dyadic so (1 + v) − 1 compounds back to v exactly) →
    // width 1/16; each value k/16 is the start of bin k, and the maximum falls in the closed last bin.
    const dates = Array.from(
      { length: 21 },
      (_, i) => `${2000 + Math.floor(i / 12)}-${String((i % 12) + 1).padStart(2, "0")}-15`,
    );
    const [s] = performanceSeries(
      "histogram",
      S(
        dates,
        Array.from({ length: 21 }, (_, i) => i / 16),
      ),
    );
    expect(s.bins!.map((b) => b.count)).toEqual([...new Array(19).fill(1), 2]);
  });
});
