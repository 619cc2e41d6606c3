// A backtest continued from its recorded state over later days gives exactly (bit for bit) the
// numbers of one backtest over the whole history: every split point of the hand-built universes,
// including splits on a rebalance day, after a delisting and with a missing price carried.
import { describe, expect, it } from "vitest";
import { backtestPortfolio, resumeBacktest } from "../../pipeline/portfolios/index.ts";
import type { PortfolioRules } from "../../pipeline/types.ts";
import { AUTUMN, autumnRules, rules, type Spec, universeOf, WINTER } from "./universe-fixture.ts";

/** The spec's first `k` days, and the days from `k` on (with the ratings that apply to them). */
function split(spec: Spec, k: number): [Spec, Spec] {
  const cut = (from: number, to: number): Spec => ({
    ...spec,
    dates: spec.dates.slice(from, to),
    closes: Object.fromEntries(Object.entries(spec.closes).map(([t, c]) => [t, c.slice(from, to)])),
  });
  const head = cut(0, k);
  const tail = cut(k, spec.dates.length);
  // The tail's ratings: the latest rating date on or before its first day, and any later ones.
  const dates = Object.keys(spec.ratings).sort();
  const asOf = dates.filter((d) => d <= tail.dates[0]).at(-1);
  tail.ratings = Object.fromEntries(Object.entries(spec.ratings).filter(([d]) => d === asOf || d > tail.dates[0]));
  return [head, tail];
}

const cases: [string, Spec, PortfolioRules][] = [
  ["winter", WINTER, rules()],
  ["winter, capped", WINTER, rules({ maxSectorConcentration: 0.5 })],
  ["winter, ascending", WINTER, rules({ maxStocksCriteriaOrder: "ascending" })],
  ["autumn", AUTUMN, autumnRules()],
  ["autumn, two-monthly", AUTUMN, autumnRules({ rebalanceFrequency: 2 })],
  // Costs are paid inside the daily loop, so a resumed backtest pays the same ones.
  ["autumn, 25 bps costs", AUTUMN, autumnRules({ costBps: 25 })],
];

describe("resumeBacktest", () => {
  for (const [name, spec, r] of cases) {
    it(`${name}: every split continues to the whole history's numbers`, () => {
      const whole = backtestPortfolio(r, universeOf(spec));
      const start = spec.dates.indexOf(whole.returns.dates[0]);
      // Splits after the first rebalance (before it there is no state to continue).
      for (let k = start + 1; k < spec.dates.length; k++) {
        const [head, tail] = split(spec, k);
        const first = backtestPortfolio(r, universeOf(head));
        expect(first.state).not.toBeNull();
        const next = resumeBacktest(r, first.state!, universeOf(tail));
        const returns = [...first.returns.returns, ...next.returns.returns];
        expect(returns).toEqual([...whole.returns.returns]); // exact doubles, not close ones
        expect([...first.returns.dates, ...next.returns.dates]).toEqual(whole.returns.dates);
        expect([...first.rebalances, ...next.rebalances]).toEqual(whole.rebalances);
        expect(next.previousRebalanceDate ?? first.previousRebalanceDate).toBe(whole.previousRebalanceDate);
        expect(next.nextRebalanceDate).toBe(whole.nextRebalanceDate);
        expect(next.todayDate).toBe(whole.todayDate);
        expect(next.todayHoldings).toEqual(whole.todayHoldings);
        expect(next.state).toEqual(whole.state);
      }
    });
  }

  it("winter split after 1 Feb: the 29 Feb rebalance happens in the resumed days", () => {
    const [head, tail] = split(WINTER, 2);
    const first = backtestPortfolio(rules(), universeOf(head));
    // State after 1 Feb: 0.05 sh A, 0.025 sh B, value 1.05 (hand computation in backtest.test.ts).
    expect(first.state).toMatchObject({
      tickers: ["A", "B"],
      cash: 0,
      calendarStart: "2024-01-31",
      nextRebalanceDate: "2024-02-29",
    });
    expect(first.state!.value).toBeCloseTo(1.05, 12);
    const next = resumeBacktest(rules(), first.state!, universeOf(tail));
    expect(next.rebalances.map((x) => x.date)).toEqual(["2024-02-29"]);
    expect(next.state.tickers).toEqual(["B", "D"]);
  });
});
