import { describe, expect, it } from "vitest";
import { backtestPortfolio, levelsFromReturns } from "../../pipeline/portfolios/index.ts";
import type { HoldingRow } from "../../pipeline/types.ts";
import { AUTUMN, autumnRules, rules, type Spec, universeOf, WINTER } from "./universe-fixture.ts";

const tickers = (h: HoldingRow[]) => h.map((x) => x.ticker);
const expectReturns = (got: Float64Array, want: number[]) => {
  expect(got.length).toBe(want.length);
  want.forEach((w, i) => {
    expect(got[i]).toBeCloseTo(w, 12);
  });
};

describe("backtest (winter)", () => {
  const u = universeOf(WINTER);
  it("buys equal weights, drifts, and gives the rebalance day's return to the old holdings", () => {
    const bt = backtestPortfolio(rules(), u);
    expect(bt.rebalances.map((r) => [r.date, tickers(r.holdings)])).toEqual([
      ["2024-01-31", ["A", "B"]],
      ["2024-02-29", ["B", "D"]],
    ]);
    // 31 Jan: 0.05 sh A @10, 0.025 sh B @20. Values: 1 Feb 0.55+0.50=1.05; 2 Feb 0.60+0.55=1.15;
    // 29 Feb (old holdings) 0.60+0.60=1.20, then 0.025 sh B @24, 0.006 sh D @100;
    // 1 Mar 0.60+0.66=1.26; 4 Mar 0.60+0.726=1.326.
    expectReturns(bt.returns.returns, [0, 0.05, 1.15 / 1.05 - 1, 1.2 / 1.15 - 1, 1.26 / 1.2 - 1, 1.326 / 1.26 - 1]);
    expect(bt.returns.dates).toEqual(WINTER.dates);
    expect(bt.previousRebalanceDate).toBe("2024-02-29");
    expect(bt.nextRebalanceDate).toBe("2024-03-31"); // a Sunday, not moved
    expect(bt.todayDate).toBe("2024-03-04");
    expect(tickers(bt.todayHoldings)).toEqual(["B", "D"]);
    expect(bt.rebalances[1].holdings[0]).toMatchObject({
      date: "2024-02-29",
      ticker: "B",
      price: 24,
      total_rating: 9,
      return_rating: 8,
    });
  });

  it("holds a missing price at its last close, and a delisted stock as cash", () => {
    // Capped: A, C on 31 Jan (0.05 sh @10, 0.01 sh @50). 1 Feb 0.55+0.45=1.00; 2 Feb C has no
    // price, keeps 45: 0.60+0.45=1.05; 29 Feb 0.60+0.40=1.00 → B, D as above from V=1.00.
    const capped = backtestPortfolio(rules({ maxSectorConcentration: 0.5 }), u);
    expectReturns(capped.returns.returns, [0, 0, 0.05, 1 / 1.05 - 1, 0.05, 1.326 / 1.26 - 1]);
    // Ascending: B, D on 31 Jan (0.025 sh, 0.005 sh): 1.00, 1.05, 1.10; 29 Feb → C 3, A 5:
    // 0.55/12 sh A, 0.55/40 sh C. 1 Mar: 0.5775+0.55=1.1275; 4 Mar A delisted, stays 0.5775,
    // C @44 0.605: 1.1825.
    const asc = backtestPortfolio(rules({ maxStocksCriteriaOrder: "ascending" }), u);
    expect(asc.rebalances.map((r) => tickers(r.holdings))).toEqual([
      ["B", "D"],
      ["A", "C"],
    ]);
    expectReturns(asc.returns.returns, [0, 0, 0.05, 1.1 / 1.05 - 1, 1.1275 / 1.1 - 1, 1.1825 / 1.1275 - 1]);
  });

  it("holds cash when nothing is selected", () => {
    // Every macro_rating is 5, outside [9, 10]: both rebalances select nothing.
    const none = backtestPortfolio(rules({ ranges: { macro_rating: [9, 10] } }), u);
    expectReturns(none.returns.returns, [0, 0, 0, 0, 0, 0]);
    expect(none.rebalances.map((r) => [r.date, r.holdings.length])).toEqual([
      ["2024-01-31", 0],
      ["2024-02-29", 0],
    ]);
    expect(none.previousRebalanceDate).toBe("2024-02-29");
  });
});

describe("backtest (autumn: three rebalances, weekend start, delisting, sector cap)", () => {
  const u = universeOf(AUTUMN);
  const bt = backtestPortfolio(autumnRules(), u);
  it("rebalances on the calendar's trading dates with the selections worked out in selection.test", () => {
    expect(bt.rebalances.map((r) => [r.date, tickers(r.holdings)])).toEqual([
      ["2024-09-02", ["P", "Q", "S"]],
      ["2024-09-30", ["Q", "R", "T"]],
      ["2024-10-31", ["P", "Q", "T"]],
    ]);
    expect(bt.rebalances[2].holdings.map((h) => h.price)).toEqual([10, 25, 8]);
    expect(bt.previousRebalanceDate).toBe("2024-10-31");
    expect(bt.nextRebalanceDate).toBe("2024-11-30"); // Saturday, not moved
    expect(bt.todayDate).toBe("2024-11-29");
    expect(bt.todayHoldings.map((h) => [h.ticker, h.price])).toEqual([
      ["P", 12],
      ["Q", 30],
      ["T", 9],
    ]);
  });

  it("computes every daily return by hand", () => {
    // 2 Sep, V=1: 1/3 each → P 1/30 sh @10, Q 1/60 sh @20, S 1/15 sh @5.
    // 16 Sep: P 12/30 + Q 20/60 + S 6/15 = (24+20+24)/60 = 68/60.
    // 30 Sep (old holdings; S delisted keeps 6): P 22/60 + Q 23/60 + S 24/60 = 69/60.
    //   Buy Q, R, T with 23/60 each at 23, 40, 8.
    // 15 Oct: Q (23/60)(24/23) = 24/60, R (23/60)(50/40) = 28.75/60, T (23/60)(10/8) = 28.75/60 → 81.5/60.
    // 31 Oct (old holdings): Q 25/60, R 28.75/60, T (23/60)(8/8) = 23/60 → 76.75/60 = V4.
    //   Buy P, Q, T with V4/3 each at 10, 25, 8.
    // 15 Nov: P ×10/10, Q ×30/25 = 1.2, T no price ×1 → (V4/3)·3.2.
    // 29 Nov: P ×1.2, Q ×1.2, T ×9/8 = 1.125 → (V4/3)·3.525.
    expect(bt.returns.dates).toEqual(AUTUMN.dates);
    expectReturns(bt.returns.returns, [
      0,
      68 / 60 - 1,
      69 / 68 - 1,
      81.5 / 69 - 1,
      76.75 / 81.5 - 1,
      3.2 / 3 - 1,
      3.525 / 3.2 - 1,
    ]);
    // The benchmark-style value index ends at (V4/3)·3.525.
    const levels = levelsFromReturns(bt.returns);
    expect(levels.dates).toEqual(AUTUMN.dates);
    expect(levels.levels[0]).toBe(1);
    expect(levels.levels[6]).toBeCloseTo((76.75 / 60 / 3) * 3.525, 12);
  });

  it("rebalances every two months from the same first date", () => {
    // 2 Sep as above; 31 Oct (ratings of 31 Oct) with V on 31 Oct from P, Q, S held since 2 Sep:
    // P 10/30 + Q 25/60 + S 6/15 (delisted at 6) = (20+25+24)/60 = 69/60.
    const bi = backtestPortfolio(autumnRules({ rebalanceFrequency: 2 }), u);
    expect(bi.rebalances.map((r) => [r.date, tickers(r.holdings)])).toEqual([
      ["2024-09-02", ["P", "Q", "S"]],
      ["2024-10-31", ["P", "Q", "T"]],
    ]);
    // 15 Oct: P 11/30 + Q 24/60 + S 24/60 = 70/60; 30 Sep: 22/60 + 23/60 + 24/60 = 69/60.
    expectReturns(bi.returns.returns, [
      0,
      68 / 60 - 1,
      69 / 68 - 1,
      70 / 69 - 1,
      69 / 70 - 1,
      3.2 / 3 - 1,
      3.525 / 3.2 - 1,
    ]);
    expect(bi.nextRebalanceDate).toBe("2024-12-31");
  });
});

describe("backtest edges", () => {
  it("starts at the first rating date and counts two calendar days moved to one trading date once", () => {
    // No trading from 2 Feb to 1 Apr: 29 Feb and 31 Mar both move to 2 Apr; 30 Apr → 1 May.
    const gap: Spec = {
      dates: ["2024-01-30", "2024-01-31", "2024-02-01", "2024-04-02", "2024-04-03", "2024-05-01"],
      closes: { X: [9, 10, 11, 12, 12, 15], Y: [9, 10, 10, 20, 22, 22] },
      sectors: { X: "Tech", Y: "Energy" },
      ratings: {
        "2024-01-31": { X: { total_rating: 9 }, Y: { total_rating: 1 } },
        "2024-04-01": { X: { total_rating: 1 }, Y: { total_rating: 9 } },
        "2024-04-30": { X: { total_rating: 9 }, Y: { total_rating: 1 } },
      },
    };
    const bt = backtestPortfolio(rules({ maxStocks: 1 }), universeOf(gap));
    expect(bt.rebalances.map((r) => [r.date, tickers(r.holdings)])).toEqual([
      ["2024-01-31", ["X"]],
      ["2024-04-02", ["Y"]],
      ["2024-05-01", ["X"]],
    ]);
    // 31 Jan: 0.1 sh X @10 → 1.1, 1.2; 2 Apr buy 0.06 sh Y @20 → 3 Apr 1.32; 1 May (old: Y 22) 1.32.
    expect(bt.returns.dates[0]).toBe("2024-01-31"); // 30 Jan precedes the ratings
    expectReturns(bt.returns.returns, [0, 0.1, 1.2 / 1.1 - 1, 0.1, 0]);
    expect(bt.previousRebalanceDate).toBe("2024-05-01");
    expect(bt.nextRebalanceDate).toBe("2024-05-31");
  });

  it("gives an empty history when there are no ratings", () => {
    const spec: Spec = {
      dates: ["2024-01-31", "2024-02-01"],
      closes: { X: [1, 2] },
      sectors: { X: "Tech" },
      ratings: {},
    };
    const bt = backtestPortfolio(rules(), universeOf(spec));
    expect(bt).toEqual({
      rebalances: [],
      returns: { dates: [], returns: new Float64Array() },
      previousRebalanceDate: null,
      nextRebalanceDate: null,
      todayDate: "2024-02-01",
      todayHoldings: [],
      state: null,
    });
  });
});

describe("levelsFromReturns", () => {
  it("compounds from 1.0, ignoring the first return", () => {
    // 1 → 1 × 1.1 = 1.1 → 1.1 × 0.5 = 0.55.
    const l = levelsFromReturns({ dates: ["a", "b", "c"], returns: Float64Array.from([0.3, 0.1, -0.5]) });
    expect([...l.levels]).toEqual([1, 1.1, 0.55]);
  });
});
