// The return convention and benchmark alignment (contract §4), on hand-made numbers.
import { describe, expect, it } from "vitest";
import { alignBenchmark, sliceByPeriod, stockReturns } from "../../pipeline/analytics/index.ts";

describe("stockReturns", () => {
  it("starts at 0.0 on the first priced date and skips days without a price", () => {
    const r = stockReturns(
      ["2024-01-01", "2024-01-02", "2024-01-03", "2024-01-04"],
      Float64Array.from([NaN, 10, NaN, 12]),
    );
    expect(r.dates).toEqual(["2024-01-02", "2024-01-04"]);
    expect(r.returns[0]).toBe(0);
    expect(r.returns[1]).toBeCloseTo(0.2, 15); // 12 / 10 − 1
  });
});

describe("alignBenchmark", () => {
  it("takes the benchmark on the subject's dates, compounding over the subject's gaps", () => {
    const bench = {
      dates: ["2024-01-01", "2024-01-02", "2024-01-03", "2024-01-05"],
      levels: Float64Array.from([100, 110, 121, 133.1]),
    };
    // Subject trades 1st, 3rd and 6th: 121/100 − 1 = 0.21; the 6th has no level, so as of the 5th: 133.1/121 − 1 = 0.1.
    const a = alignBenchmark(["2024-01-01", "2024-01-03", "2024-01-06"], bench);
    expect(a.returns[0]).toBe(0);
    expect(a.returns[1]).toBeCloseTo(0.21, 12);
    expect(a.returns[2]).toBeCloseTo(0.1, 12);
  });
  it("is 0.0 until the benchmark has a level", () => {
    const a = alignBenchmark(["2023-12-29", "2024-01-02", "2024-01-03"], {
      dates: ["2024-01-02", "2024-01-03"],
      levels: Float64Array.from([50, 55]),
    });
    expect([...a.returns].map((x) => +x.toFixed(12))).toEqual([0, 0, 0.1]);
  });
});

describe("sliceByPeriod", () => {
  const dates = ["2022-01-03", "2022-06-01", "2023-01-02", "2023-06-01", "2024-01-02"];
  const s = { dates, returns: Float64Array.from([0, 0.1, 0.2, 0.3, 0.4]) };
  it("keeps returns after latest − years × 365.25 days", () => {
    // 2024-01-02 − 365.25 days = 2023-01-01 18:00: keeps 2023-01-02 on.
    expect(sliceByPeriod(s, 1).dates).toEqual(["2023-01-02", "2023-06-01", "2024-01-02"]);
    expect(sliceByPeriod(s, 0.5).dates).toEqual(["2024-01-02"]);
  });
  it("keeps everything for a period longer than the history", () => {
    expect(sliceByPeriod(s, 10)).toBe(s);
  });
});
