// sliceByWindow and avgAnnualTurnover (issue #41) on small series worked out by hand.
import { describe, expect, it } from "vitest";
import { avgAnnualTurnover, metricRows, sliceByWindow } from "../../pipeline/analytics/index.ts";

const series = {
  dates: ["2024-01-02", "2024-01-03", "2024-01-05", "2024-01-08"],
  returns: Float64Array.from([0, 0.1, -0.05, 0.02]),
};

describe("sliceByWindow", () => {
  it("keeps the returns dated within [start, end], bounds inclusive, either optional", () => {
    expect(sliceByWindow(series, "2024-01-03", "2024-01-05").dates).toEqual(["2024-01-03", "2024-01-05"]);
    // no price on the 4th: from the next priced date
    expect([...sliceByWindow(series, "2024-01-04").returns]).toEqual([-0.05, 0.02]);
    expect(sliceByWindow(series, undefined, "2024-01-04").dates).toEqual(["2024-01-02", "2024-01-03"]);
    expect(sliceByWindow(series, "2024-02-01").dates).toEqual([]);
    expect(sliceByWindow(series, "2023-01-01", "2025-01-01")).toBe(series); // every date: the series itself
  });

  it("the window's table starts at its first priced date and compounds from the close before it", () => {
    const t = metricRows(sliceByWindow(series, "2024-01-03"), "X");
    expect(t.find((r) => r.metric === "Start Period")?.X).toBe("2024-01-03");
    // 1.1 × 0.95 × 1.02 − 1 = 0.0659
    expect(t.find((r) => r.metric === "Cumulative Return ")?.X).toBe("6.59%");
  });
});

describe("avgAnnualTurnover", () => {
  it("sums the turnover after the first purchase within the dates, per year (days / 365)", () => {
    const reb = [
      { date: "2023-01-02", turnover: 1 },
      { date: "2023-07-03", turnover: 0.5 },
      { date: "2024-01-02", turnover: 0.3 },
    ];
    // 2023-01-02 .. 2024-01-02 is 365 days: one year; 0.5 + 0.3 = 0.8
    expect(avgAnnualTurnover(["2023-01-02", "2024-01-02"], reb)).toBeCloseTo(0.8, 12);
    // a window from 1 Jul 2023 (185 days to 2 Jan 2024): 0.8 / (185 / 365)
    expect(avgAnnualTurnover(["2023-07-01", "2024-01-02"], reb)).toBeCloseTo(0.8 / (185 / 365), 12);
    expect(avgAnnualTurnover(["2023-01-02"], reb)).toBeNaN();
  });
});
