// Trading costs and turnover in the backtest (issue #41, docs/portfolios.md "Costs and turnover").
// Reference numbers are hand computations on the fixtures of backtest.test.ts, written out below.
import { describe, expect, it } from "vitest";
import { backtestPortfolio } from "../../pipeline/portfolios/index.ts";
import type { PortfolioRules } from "../../pipeline/types.ts";
import { AUTUMN, autumnRules, rules, type Spec, universeOf, WINTER } from "./universe-fixture.ts";

const expectClose = (got: number[], want: number[]) => {
  expect(got.length).toBe(want.length);
  want.forEach((w, i) => {
    expect(got[i]).toBeCloseTo(w, 12);
  });
};
const endValue = (r: Float64Array) => r.reduce((v, x) => v * (1 + x), 1);

describe("backtest costs (hand-computed, winter, 100 bps)", () => {
  const u = universeOf(WINTER);
  it("charges 1% of the traded value at each of the two rebalances", () => {
    // 31 Jan: V=1 in cash buys A and B, 0.5 each: traded 1, turnover 1, cost 0.01 → V 0.99
    //   (the day's return −0.01); 0.0495 sh A @10, 0.02475 sh B @20.
    // 1 Feb: 0.5445 + 0.495 = 1.0395 (+5%); 2 Feb: 0.594 + 0.5445 = 1.1385.
    // 29 Feb before trading: A 0.594, B 0.02475 × 24 = 0.594 → 1.188; targets B, D 0.594 each:
    //   traded |0.594 − 0.594| (B) + 0.594 (D bought) + 0.594 (A sold) = 1.188, turnover 1,
    //   cost 0.01188 → V 1.17612; then B and D grow ×1.105 to 4 Mar
    //   (1.20 → 1.326 gross in backtest.test).
    const bt = backtestPortfolio(rules({ costBps: 100 }), u);
    expect(bt.rebalances.map((r) => r.date)).toEqual(["2024-01-31", "2024-02-29"]);
    bt.rebalances.forEach((r) => {
      expect(r.turnover).toBeCloseTo(1, 12);
      expect(r.cost).toBeCloseTo(0.01, 12);
    });
    const want = [-0.01, 0.05, 1.1385 / 1.0395 - 1, 1.17612 / 1.1385 - 1, 1.26 / 1.2 - 1, 1.326 / 1.26 - 1];
    want.forEach((w, i) => {
      expect(bt.returns.returns[i]).toBeCloseTo(w, 12);
    });
    expect(endValue(bt.returns.returns)).toBeCloseTo(1.17612 * 1.105, 12);
  });

  it("counts a full swap as turnover 2 (everything sold, everything bought)", () => {
    // Ascending: B, D on 31 Jan, then A, C on 29 Feb: 1.10 sold and 1.10 bought over V 1.10 (gross).
    const asc = backtestPortfolio(rules({ maxStocksCriteriaOrder: "ascending", costBps: 50 }), u);
    expectClose(
      asc.rebalances.map((r) => r.turnover),
      [1, 2],
    );
    expect(asc.rebalances[1].cost).toBeCloseTo(0.01, 12);
  });
});

describe("net of costs = gross × Π(1 − costBps / 10,000 × turnover)", () => {
  const cases: [string, Spec, PortfolioRules][] = [
    ["autumn", AUTUMN, autumnRules()],
    ["autumn, two-monthly", AUTUMN, autumnRules({ rebalanceFrequency: 2 })],
    ["winter, sector cap", WINTER, rules({ maxSectorConcentration: 0.5 })],
    ["winter, nothing selected", WINTER, rules({ ranges: { macro_rating: [9, 10] } })],
  ];
  for (const [name, spec, r] of cases)
    for (const costBps of [1, 37, 500]) {
      it(`${name}, ${costBps} bps`, () => {
        const gross = backtestPortfolio(r, universeOf(spec));
        const net = backtestPortfolio({ ...r, costBps }, universeOf(spec));
        // Costs scale every position alike, so the turnover does not depend on them.
        expectClose(
          net.rebalances.map((x) => x.turnover),
          gross.rebalances.map((x) => x.turnover),
        );
        const factor = gross.rebalances.reduce((p, x) => p * (1 - (costBps / 10_000) * x.turnover), 1);
        expect(factor < 1).toBe(gross.rebalances.some((x) => x.holdings.length > 0));
        const g = endValue(gross.returns.returns);
        expect(endValue(net.returns.returns) / (g * factor)).toBeCloseTo(1, 12);
        expect(net.state!.value / (gross.state!.value * factor)).toBeCloseTo(1, 12);
      });
    }

  it("without costs, every number is the gross backtest's bit for bit", () => {
    const a = backtestPortfolio(autumnRules(), universeOf(AUTUMN));
    const b = backtestPortfolio(autumnRules({ costBps: 0 }), universeOf(AUTUMN));
    expect([...b.returns.returns]).toEqual([...a.returns.returns]);
    expect(b.returns.returns[0]).toBe(0);
    expect(b.state).toEqual(a.state);
    expect(b.rebalances.every((x) => x.cost === 0)).toBe(true);
  });
});
