import { describe, expect, it } from "vitest";
import { addMonthsClamped, backtestPortfolio, computeTrades, levelsFromReturns, rebalanceCalendar, selectOn } from "../../pipeline/portfolios/index.ts";
import type { HoldingRow } from "../../pipeline/types.ts";
import { companies, rules, universe } from "./universe-fixture.ts";

const tickers = (h: HoldingRow[]) => h.map((x) => x.ticker);
const expectReturns = (got: Float64Array, want: number[]) => {
  expect(got.length).toBe(want.length);
  want.forEach((w, i) => expect(got[i]).toBeCloseTo(w, 12));
};

describe("rebalance calendar", () => {
  it("counts months from the first date, clamped to month ends", () => {
    expect(addMonthsClamped("2024-01-31", 1)).toBe("2024-02-29"); // leap year
    expect(addMonthsClamped("2023-01-31", 1)).toBe("2023-02-28");
    expect(addMonthsClamped("2024-01-31", 2)).toBe("2024-03-31"); // from the first date: not 29 Mar
    expect(addMonthsClamped("2024-08-31", 6)).toBe("2025-02-28");
    expect(addMonthsClamped("2024-11-15", 12)).toBe("2025-11-15");
  });

  it("moves days to the next trading date, and keeps the next one unmoved", () => {
    const trading = ["2024-01-31", "2024-02-29", "2024-03-28", "2024-04-01", "2024-04-30"];
    // 31 Mar 2024 is a Sunday: moved to Mon 1 Apr; the day after the data (31 May) stays as is.
    expect(rebalanceCalendar("2024-01-31", 1, trading)).toEqual({
      scheduled: ["2024-01-31", "2024-02-29", "2024-03-31", "2024-04-30", "2024-05-31"],
      actual: ["2024-01-31", "2024-02-29", "2024-04-01", "2024-04-30"],
    });
    expect(rebalanceCalendar("2024-01-31", 3, trading)).toEqual({ scheduled: ["2024-01-31", "2024-04-30", "2024-07-31"], actual: ["2024-01-31", "2024-04-30"] });
  });
});

describe("selection", () => {
  const u = universe();
  it("ranks by the criteria with ties by ticker", () => {
    // 31 Jan totals: A 9, B 8, C 8, D 5 → A, then B before C on the tie.
    expect(tickers(selectOn("2024-01-31", rules(), u))).toEqual(["A", "B"]);
    // Ascending: D 5, then B/C tie at 8 → B.
    expect(tickers(selectOn("2024-01-31", rules({ maxStocksCriteriaOrder: "ascending" }), u))).toEqual(["B", "D"]);
  });
  it("applies the sector cap floor(0.5 × 2) = 1 in rank order", () => {
    // A (Tech) taken, B (Tech) skipped, C (Energy) taken.
    expect(tickers(selectOn("2024-01-31", rules({ maxSectorConcentration: 0.5 }), u))).toEqual(["A", "C"]);
    expect(tickers(selectOn("2024-01-31", rules({ maxSectorConcentration: 1 }), u))).toEqual(["A", "B"]);
  });
  it("keeps only stocks inside every range, bounds inclusive", () => {
    // return_rating = total − 1 on 31 Jan: A 8, B 7, C 7, D 4; [7, 7.5] keeps B and C.
    expect(tickers(selectOn("2024-01-31", rules({ ranges: { return_rating: [7, 7.5] }, maxStocks: 5 }), u))).toEqual(["B", "C"]);
  });
  it("ranks by market cap, unknown caps last", () => {
    expect(tickers(selectOn("2024-01-31", rules({ maxStocksCriteria: "market_cap", maxStocks: 3 }), u))).toEqual(["A", "B", "D"]);
    expect(tickers(selectOn("2024-01-31", rules({ maxStocksCriteria: "market_cap", maxStocksCriteriaOrder: "ascending", maxStocks: 3 }), u))).toEqual(["A", "B", "D"]);
  });
  it("uses the ratings as of the date and requires a close that day", () => {
    // 4 Mar uses the 29 Feb ratings (A 5, B 9, C 3, D 9); ascending: C, then A has no price → B.
    expect(tickers(selectOn("2024-03-04", rules({ maxStocksCriteriaOrder: "ascending" }), u))).toEqual(["B", "C"]);
  });
});

describe("backtest", () => {
  const u = universe();
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
    expect(bt.returns.dates).toEqual(u.panel.dates);
    expect(bt.previousRebalanceDate).toBe("2024-02-29");
    expect(bt.nextRebalanceDate).toBe("2024-03-31"); // a Sunday, not moved
    expect(bt.todayDate).toBe("2024-03-04");
    expect(tickers(bt.todayHoldings)).toEqual(["B", "D"]);
    expect(bt.rebalances[1].holdings[0]).toMatchObject({ date: "2024-02-29", ticker: "B", price: 24, total_rating: 9, return_rating: 8 });
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
    expect(asc.rebalances.map((r) => tickers(r.holdings))).toEqual([["B", "D"], ["A", "C"]]);
    expectReturns(asc.returns.returns, [0, 0, 0.05, 1.1 / 1.05 - 1, 1.1275 / 1.1 - 1, 1.1825 / 1.1275 - 1]);
  });

  it("holds cash when nothing is selected", () => {
    const none = backtestPortfolio(rules({ ranges: { macro_rating: [9, 10] } }), u);
    expectReturns(none.returns.returns, [0, 0, 0, 0, 0, 0]);
    expect(none.rebalances.every((r) => r.holdings.length === 0)).toBe(true);
  });

  it("compounds a value index from returns", () => {
    const l = levelsFromReturns({ dates: ["a", "b", "c"], returns: Float64Array.from([0, 0.1, -0.5]) });
    expect([...l.levels]).toEqual([1, 1.1, 0.55]);
  });
});

describe("trades", () => {
  const h = (ticker: string, price: number) => ({ date: "2024-02-29", ticker, price }) as HoldingRow;
  const cos = new Map(companies().map((c) => [c.ticker, c]));
  it("rounds whole shares half up, lists a share pricier than its target with 0", () => {
    // value 1500, 3 names → target 500: A @200 = 2.5 → 3 (600.00); B @600 > 500 → 0; C @24 = 20.83 → 21 (504.00).
    const t = computeTrades({ holdings: [h("B", 600), h("A", 200), h("C", 24)], companies: cos, value: 1500, allowFractional: false });
    expect(t.map((x) => [x.ticker, x.id, x.name, x.quantity, x.value, x.pct, x.order_type])).toEqual([
      ["A", 1, "A Corp", 3, 600, 0.4, "Buy"],
      ["B", 2, "B Corp", 0, 0, 0, "Buy"],
      ["C", 3, "C Corp", 21, 504, 0.336, "Buy"],
    ]);
  });
  it("gives 6-decimal fractions with allow_fractional", () => {
    // target 750: A @24 → 31.25 sh (750.00); B @700 → 1.071429 sh (1.071429 × 700 = 750.0003 → 750.00).
    const t = computeTrades({ holdings: [h("A", 24), h("B", 700)], companies: cos, value: 1500, allowFractional: true });
    expect(t.map((x) => [x.quantity, x.value])).toEqual([
      [31.25, 750],
      [1.071429, 750],
    ]);
  });
});
