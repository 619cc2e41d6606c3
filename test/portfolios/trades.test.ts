import { describe, expect, it } from "vitest";
import { backtestPortfolio, computeTrades, roundHalfUp } from "../../pipeline/portfolios/index.ts";
import type { HoldingRow } from "../../pipeline/types.ts";
import { AUTUMN, autumnRules, companiesOf, universeOf, WINTER } from "./universe-fixture.ts";

const h = (ticker: string, price: number) => ({ date: "2024-02-29", ticker, price }) as HoldingRow;
const cos = new Map(companiesOf(WINTER).map((c) => [c.ticker, c]));
const row = (t: { ticker: string; quantity: number; value: number; pct: number }) => [
  t.ticker,
  t.quantity,
  t.value,
  t.pct,
];

describe("trades", () => {
  it("rounds whole shares half up, lists a share pricier than its target with 0", () => {
    // value 1500, 3 names → target 500: A @200 = 2.5 → 3 (600.00); B @600 > 500 → 0; C @24 = 20.83 → 21 (504.00).
    const t = computeTrades({
      holdings: [h("B", 600), h("A", 200), h("C", 24)],
      companies: cos,
      value: 1500,
      allowFractional: false,
    });
    expect(t.map((x) => [x.date, x.ticker, x.id, x.name, x.price, x.quantity, x.value, x.pct, x.order_type])).toEqual([
      ["2024-02-29", "A", 1, "A Corp", 200, 3, 600, 0.4, "Buy"],
      ["2024-02-29", "B", 2, "B Corp", 600, 0, 0, 0, "Buy"],
      ["2024-02-29", "C", 3, "C Corp", 24, 21, 504, 0.336, "Buy"],
    ]);
  });

  it("gives 6-decimal fractions with allow_fractional, a pricier share included", () => {
    // target 750: A @24 → 31.25 sh (750.00); B @700 → 1.0714285… → 1.071429 sh (× 700 = 750.0003 → 750.00);
    // C @1000 > 750 → 0.75 sh (750.00): fractions exist to buy less than a share.
    const t = computeTrades({
      holdings: [h("A", 24), h("B", 700), h("C", 1000)],
      companies: cos,
      value: 2250,
      allowFractional: true,
    });
    expect(t.map(row)).toEqual([
      ["A", 31.25, 750, 750 / 2250],
      ["B", 1.071429, 750, 750 / 2250],
      ["C", 0.75, 750, 750 / 2250],
    ]);
  });

  it("trades the autumn holdings of the last rebalance and of today", () => {
    const bt = backtestPortfolio(autumnRules(), universeOf(AUTUMN));
    const companies = new Map(companiesOf(AUTUMN).map((c) => [c.ticker, c]));
    const last = bt.rebalances.at(-1)!.holdings; // 31 Oct: P @10, Q @25, T @8
    // value 60 → target 20: P 2 (20.00); Q @25 > 20 → 0; T 20/8 = 2.5 → 3 (24.00). pct of 60.
    const whole = computeTrades({ holdings: last, companies, value: 60, allowFractional: false });
    expect(whole.map((x) => [x.date, x.id, ...row(x)])).toEqual([
      ["2024-10-31", 1, "P", 2, 20, 20 / 60],
      ["2024-10-31", 2, "Q", 0, 0, 0],
      ["2024-10-31", 5, "T", 3, 24, 0.4],
    ]);
    // Fractional: 2, 0.8, 2.5 shares, 20.00 each.
    expect(computeTrades({ holdings: last, companies, value: 60, allowFractional: true }).map(row)).toEqual([
      ["P", 2, 20, 20 / 60],
      ["Q", 0.8, 20, 20 / 60],
      ["T", 2.5, 20, 20 / 60],
    ]);
    // rebalance_period=today: 29 Nov, P @12, Q @30, T @9; value 100 → target 33.33…:
    // P 2.78 → 3 (36.00), Q 1.11 → 1 (30.00), T 3.70 → 4 (36.00).
    const today = computeTrades({ holdings: bt.todayHoldings, companies, value: 100, allowFractional: false });
    expect(today.map((x) => [x.date, ...row(x)])).toEqual([
      ["2024-11-29", "P", 3, 36, 0.36],
      ["2024-11-29", "Q", 1, 30, 0.3],
      ["2024-11-29", "T", 4, 36, 0.36],
    ]);
  });

  it("values in cents with halves up, and lists nothing for no holdings", () => {
    // value 4, one name: 4 / 1.255 = 3.19 → 3 shares; 3 × 1.255 = 3.765 (3.7649999999999997 in
    // doubles) → 3.77; pct 3.77 / 4 = 0.9425.
    const t = computeTrades({ holdings: [h("A", 1.255)], companies: cos, value: 4, allowFractional: false });
    expect(row(t[0])).toEqual(["A", 3, 3.77, 0.9425]);
    expect(computeTrades({ holdings: [], companies: cos, value: 1000, allowFractional: false })).toEqual([]);
  });

  it("rounds decimal halves up despite binary representation", () => {
    expect(roundHalfUp(2.5, 0)).toBe(3);
    expect(roundHalfUp(2.4999, 0)).toBe(2);
    expect(roundHalfUp(1.005, 2)).toBe(1.01); // 1.00499999999999989 as a double
    expect(roundHalfUp(2.675, 2)).toBe(2.68);
    expect(roundHalfUp(1.0000005, 6)).toBe(1.000001);
    expect(roundHalfUp(1.0000004, 6)).toBe(1);
  });
});
