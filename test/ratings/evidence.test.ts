// The evidence's definitions (docs/ratings.md, "The evidence") on cases worked out by hand below,
// and the rank correlation against simple-statistics' own sampleRankCorrelation on random ties.
import { sampleRankCorrelation } from "simple-statistics";
import { describe, expect, it } from "vitest";
import { type DateEvidence, EvidenceAccumulator, evaluateDate, MIN_STOCKS } from "../../pipeline/ratings/evidence.ts";
import { evaluationDates, plusCalendarMonths } from "../../pipeline/ratings/evidence-dates.ts";

const order = (n: number) => Array.from({ length: n }, (_, i) => i);

// Date 1, six stocks A..F (ticker order 0..5):
//   rating  A 1, B 2, C 2, D 3, E 5, F 4;  forward  A −0.02, B 0.01, C 0.03, D 0.00, E 0.05, F 0.02
// Rating midranks (0-based; B and C tie at positions 1 and 2 → 1.5): A 0, B 1.5, C 1.5, D 3, E 5, F 4.
// Return ranks (−0.02 < 0 < 0.01 < 0.02 < 0.03 < 0.05): A 0, B 2, C 4, D 1, E 5, F 3.
// Both means 2.5; deviations x: −2.5 −1 −1 0.5 2.5 1.5, y: −2.5 −0.5 1.5 −1.5 2.5 0.5;
// Σxy = 6.25 + 0.5 − 1.5 − 0.75 + 6.25 + 0.75 = 11.5, Σx² = 17, Σy² = 17.5 → ic = 11.5 / √(17 · 17.5).
// Quintiles: by rating, ties by ticker: A B C D F E at positions 0..5, bucket ⌊5p/6⌋ = 0 0 1 2 3 4:
//   Q1 {A, B} (−0.02 + 0.01) / 2 = −0.005, Q2 {C} 0.03, Q3 {D} 0, Q4 {F} 0.02, Q5 {E} 0.05; top {E}.
const day1 = {
  order: order(6),
  rating: [1, 2, 2, 3, 5, 4],
  forward: [-0.02, 0.01, 0.03, 0.0, 0.05, 0.02],
};
const IC1 = 11.5 / Math.sqrt(17 * 17.5);
// Date 2: ratings A 5 … F 0 against returns A 0.01 … F 0.06, exactly reversed: ic = −1.
// By rating: F E D C B A; buckets Q1 {F, E} 0.055, Q2 {D} 0.04, Q3 {C} 0.03, Q4 {B} 0.02, Q5 {A} 0.01; top {A}.
const day2 = {
  order: order(6),
  rating: [5, 4, 3, 2, 1, 0],
  forward: [0.01, 0.02, 0.03, 0.04, 0.05, 0.06],
};

describe("one date's evidence", () => {
  it("ranks with average ranks for ties and buckets by position ⌊5i/n⌋, ties by ticker", () => {
    const d = evaluateDate("2020-01-31", day1, 1)!;
    expect(d.ic).toBeCloseTo(IC1, 12);
    expect(d.stocks).toBe(6);
    expect(d.quintiles.map((q) => Number(q.toFixed(12)))).toEqual([-0.005, 0.03, 0, 0.02, 0.05]);
    expect([...d.top]).toEqual([4]);
    const e = evaluateDate("2020-02-28", day2, 1)!;
    expect(e.ic).toBeCloseTo(-1, 12);
    expect(e.quintiles.map((q) => Number(q.toFixed(12)))).toEqual([0.055, 0.04, 0.03, 0.02, 0.01]);
    expect([...e.top]).toEqual([0]);
  });

  it("breaks a tie across a bucket edge by ticker, not by input position", () => {
    // the same stocks listed in another order (B and C swapped): C still sorts after B
    const shuffled = {
      order: [0, 2, 1, 3, 4, 5],
      rating: [1, 2, 2, 3, 5, 4],
      forward: [-0.02, 0.03, 0.01, 0, 0.05, 0.02],
    };
    const d = evaluateDate("2020-01-31", shuffled, 1)!;
    expect(d.ic).toBeCloseTo(IC1, 12);
    expect(d.quintiles.map((q) => Number(q.toFixed(12)))).toEqual([-0.005, 0.03, 0, 0.02, 0.05]);
  });

  it("leaves out rows without a rating or a forward return, and dates with fewer than 20 stocks", () => {
    const n = MIN_STOCKS;
    const rating = Array.from({ length: n }, (_, i) => i);
    const forward = rating.map((r) => r / 100);
    expect(evaluateDate("d", { order: order(n), rating, forward })?.ic).toBeCloseTo(1, 12);
    const gap = { order: order(n), rating: [Number.NaN, ...rating.slice(1)], forward };
    expect(evaluateDate("d", gap)).toBeNull(); // 19 stocks left
    const noReturn = { order: order(n + 1), rating: [...rating, 99], forward: [...forward, Number.NaN] };
    expect(evaluateDate("d", noReturn)?.stocks).toBe(n);
    // every rating equal: no rank correlation, not evaluated
    expect(evaluateDate("d", { order: order(n), rating: rating.map(() => 5), forward })).toBeNull();
  });

  it("is Spearman's rho as simple-statistics computes it, on random data full of ties", () => {
    let seed = 7;
    const rand = () => {
      seed = (seed * 16807) % 2147483647;
      return seed / 2147483647;
    };
    for (let t = 0; t < 50; t++) {
      const n = 20 + Math.floor(rand() * 200);
      const rating = Array.from({ length: n }, () => Math.round(rand() * 10) / 2);
      const forward = rating.map((r) => Math.round((r * rand() - 1) * 20) / 100);
      const d = evaluateDate("d", { order: order(n), rating, forward });
      expect(d!.ic).toBeCloseTo(sampleRankCorrelation(rating, forward), 12);
    }
  });
});

describe("the summary over dates", () => {
  it("averages the two hand-computed dates", () => {
    const acc = new EvidenceAccumulator();
    acc.add(evaluateDate("2020-01-31", day1, 1)!);
    acc.add(evaluateDate("2020-02-28", day2, 1)!);
    const s = acc.summary();
    const mean = (IC1 - 1) / 2;
    // sample std of two values: |a − b| / √2
    const std = Math.abs(IC1 + 1) / Math.SQRT2;
    expect(s.dates).toBe(2);
    expect(s.meanIc).toBeCloseTo(mean, 12);
    expect(s.icStd).toBeCloseTo(std, 12);
    expect(s.icir).toBeCloseTo(mean / std, 12);
    expect(s.tStat).toBeCloseTo(mean / (std / Math.SQRT2), 12);
    expect(s.hitRate).toBe(0.5);
    // quintile means averaged over the dates: (−0.005 + 0.055) / 2 …; spread Q5 − Q1 = 0.03 − 0.025
    expect(s.quintileReturns.map((q) => Number(q.toFixed(12)))).toEqual([0.025, 0.035, 0.015, 0.02, 0.03]);
    expect(s.spread).toBeCloseTo(0.005, 12);
    // top {E} then {A}: A was not in it, 1 of 1
    expect(s.topTurnover).toBe(1);
    expect(s.ic).toEqual([
      { date: "2020-01-31", ic: expect.closeTo(IC1, 12), stocks: 6 },
      { date: "2020-02-28", ic: expect.closeTo(-1, 12), stocks: 6 },
    ]);
  });

  it("takes the sample std (n − 1), the t statistic and the top quintile's turnover", () => {
    // ICs 0.1, −0.05, 0.3: mean 0.35 / 3; squared deviations 0.000277…, 0.027777…, 0.033611… sum
    // 0.0616667, / 2 → std √0.0308333 = 0.175594; t = mean / (std / √3) = 1.15079.
    // Tops {1,2,3,4} → {3,4,5,6}: 5 and 6 new, 2 / 4; → {6,7,1,2}: 7, 1, 2 new, 3 / 4; mean 0.625.
    const at = (ic: number, top: number[], q5: number): DateEvidence => ({
      date: "d",
      ic,
      stocks: 20,
      quintiles: [0, 0, 0, 0, q5],
      top: new Set(top),
    });
    const acc = new EvidenceAccumulator();
    acc.add(at(0.1, [1, 2, 3, 4], 0.03));
    acc.add(at(-0.05, [3, 4, 5, 6], 0));
    acc.add(at(0.3, [6, 7, 1, 2], 0.06));
    const s = acc.summary();
    expect(s.meanIc).toBeCloseTo(0.35 / 3, 12);
    expect(s.icStd).toBeCloseTo(0.175594, 6);
    expect(s.tStat).toBeCloseTo(1.15079, 5);
    expect(s.hitRate).toBeCloseTo(2 / 3, 12);
    expect(s.topTurnover).toBeCloseTo(0.625, 12);
    expect(s.spread).toBeCloseTo(0.03, 12);
  });

  it("has no figures without evaluated dates, and no std, IR, t or turnover from one", () => {
    const none = new EvidenceAccumulator().summary();
    expect(none).toMatchObject({
      dates: 0,
      meanIc: null,
      icStd: null,
      hitRate: null,
      quintileReturns: [],
      spread: null,
    });
    const one = new EvidenceAccumulator();
    one.add(evaluateDate("2020-01-31", day1, 1)!);
    expect(one.summary()).toMatchObject({ dates: 1, icStd: null, icir: null, tStat: null, topTurnover: null });
  });
});

describe("the evaluated dates", () => {
  it("adds calendar months as date-fns addMonths does (the day clamped to the month's end)", () => {
    expect(plusCalendarMonths("2020-01-31", 1)).toBe("2020-02-29");
    expect(plusCalendarMonths("2019-01-31", 1)).toBe("2019-02-28");
    expect(plusCalendarMonths("2019-08-31", 6)).toBe("2020-02-29");
    expect(plusCalendarMonths("2019-12-15", 12)).toBe("2020-12-15");
  });

  it("takes the first trading date on or after D + h, none past the calendar, and the momentum's dates", () => {
    // a calendar of every weekday from 2019-01-01 to 2020-03-31
    const calendar: string[] = [];
    for (let t = Date.UTC(2019, 0, 1); t <= Date.UTC(2020, 2, 31); t += 86_400_000) {
      const d = new Date(t);
      if (d.getUTCDay() % 6 !== 0) calendar.push(d.toISOString().slice(0, 10));
    }
    const [e] = evaluationDates(["2020-01-31"], calendar);
    // 2020-01-31 + 1 month = 2020-02-29, a Saturday: the Monday after
    expect(e.forward[1]).toBe("2020-03-02");
    expect(e.forward[3]).toBeNull(); // 2020-04-30 is past the calendar
    const i = calendar.indexOf("2020-01-31");
    expect(e.skip).toBe(calendar[i - 21]);
    expect(e.lookback).toBe(calendar[i - 252]);
    // a rating date that is no trading date has no momentum dates (nor a close at D)
    expect(evaluationDates(["2020-02-01"], calendar)[0]).toMatchObject({ skip: null, lookback: null });
  });
});

describe("a planted signal", () => {
  it("recovers a known rank correlation within two standard errors, and finds none where none is", () => {
    // Ratings and returns bivariate normal with Pearson correlation 0.1: the population Spearman
    // correlation is (6 / π) · asin(0.1 / 2) = 0.09553 (Pearson 1907); an independent rating has 0.
    let seed = 20_260_101;
    const uniform = () => {
      seed = (seed * 48271) % 2147483647;
      return seed / 2147483647;
    };
    const normal = () => Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
    const planted = new EvidenceAccumulator();
    const none = new EvidenceAccumulator();
    const n = 300;
    for (let d = 0; d < 120; d++) {
      const rating = Array.from({ length: n }, normal);
      const forward = rating.map((r) => 0.1 * r + Math.sqrt(1 - 0.01) * normal());
      const unrelated = Array.from({ length: n }, normal);
      planted.add(evaluateDate(`d${d}`, { order: order(n), rating, forward })!);
      none.add(evaluateDate(`d${d}`, { order: order(n), rating: unrelated, forward })!);
    }
    const p = planted.summary();
    const z = none.summary();
    const se = (s: typeof p) => s.icStd! / Math.sqrt(s.dates);
    expect(Math.abs(p.meanIc! - (6 / Math.PI) * Math.asin(0.05))).toBeLessThan(2 * se(p));
    expect(Math.abs(z.meanIc!)).toBeLessThan(2 * se(z));
    // the planted rating's top quintile earns more than its bottom one
    expect(p.spread!).toBeGreaterThan(0);
  });
});
