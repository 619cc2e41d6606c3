// OrderStats answers the ranks and quantiles the metrics read (extremes, 1/5/95/99 %) without
// sorting the whole series: each value must be the sort's, bit for bit — a zero's sign included
// (the sort puts −0 before +0; the selection's `<` cannot tell them apart) and NaN last.
import { describe, expect, it } from "vitest";
import { OrderStats } from "../../pipeline/analytics/order-stats.ts";
import { quantileSorted } from "../../pipeline/analytics/stats.ts";

// A deterministic generator (no library: a linear congruential one).
function lcg(seed: number) {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648;
  };
}

const QS = [0.01, 0.05, 0.95, 0.99];

/** Every rank the tails hold and every quantile of QS, against the sorted copy. */
function expectSortAgreement(x: Float64Array) {
  const sorted = Float64Array.from(x).sort();
  const o = new OrderStats(x);
  const n = x.length;
  const ranks = [
    0,
    1,
    2,
    n - 3,
    n - 2,
    n - 1,
    ...QS.flatMap((q) => [Math.floor((n - 1) * q), Math.floor((n - 1) * q) + 1]),
  ].filter((k) => k >= 0 && k < n);
  for (const k of ranks)
    expect(Object.is(o.at(k), sorted[k]), `rank ${k} of ${n}: ${o.at(k)} vs ${sorted[k]}`).toBe(true);
  for (const q of QS) expect(Object.is(o.quantile(q), quantileSorted(sorted, q)), `q ${q}`).toBe(true);
}

describe("OrderStats", () => {
  it("gives the sort's values on random series of many lengths", () => {
    const rnd = lcg(1);
    for (const n of [0, 1, 2, 3, 10, 63, 64, 65, 100, 1000, 6301]) {
      const x = Float64Array.from({ length: n }, () => (rnd() - 0.5) * 0.04);
      expectSortAgreement(x);
    }
  });

  it("gives each zero the sign the sort gives it, and sorts around NaN", () => {
    const rnd = lcg(2);
    const n = 2000;
    // mostly zeros of both signs, so the tails and the quantiles fall on zeros
    const cases = [
      Float64Array.from({ length: n }, (_, i) => (i % 3 === 0 ? -0 : i % 3 === 1 ? 0 : rnd() - 0.5)),
      Float64Array.from({ length: n }, (_, i) => (i % 2 ? -0 : rnd())), // −0 is the lowest tail
      Float64Array.from({ length: n }, (_, i) => (i % 2 ? 0 : -rnd())), // +0 is the highest tail
      Float64Array.from({ length: n }, (_, i) => (i % 50 === 0 ? -rnd() : i % 50 === 1 ? rnd() : i % 2 ? -0 : 0)),
      Float64Array.from({ length: n }, (_, i) => (i === 700 ? NaN : rnd() - 0.5)),
      Float64Array.from({ length: n }, () => 0.001), // all equal
      Float64Array.from({ length: n }, (_, i) => i), // sorted
      Float64Array.from({ length: n }, (_, i) => -i), // reversed
      Float64Array.from({ length: n }, () => Math.round(rnd() * 4)), // few distinct values
    ];
    for (const x of cases) expectSortAgreement(x);
  });

  it("reads a zero's sign from the sort when −0 and +0 meet in a tail", () => {
    // 100 values: 2 negatives, then 49 × −0 (ranks 2..50) and 49 × +0 (ranks 51..99), shuffled.
    // The tails kept in place are ranks 0..5 and 94..99: all zeros but ranks 0 and 1.
    const rnd = lcg(3);
    const x = Float64Array.from([-0.3, -0.2, ...Array(49).fill(-0), ...Array(49).fill(0)]);
    for (let i = x.length - 1; i > 0; i--) {
      const j = Math.floor(rnd() * (i + 1));
      [x[i], x[j]] = [x[j], x[i]];
    }
    const o = new OrderStats(x);
    expect([o.at(0), o.at(1)]).toEqual([-0.3, -0.2]);
    for (let k = 2; k <= 5; k++) expect(Object.is(o.at(k), -0), `rank ${k}`).toBe(true);
    for (let k = 94; k <= 99; k++) expect(Object.is(o.at(k), 0), `rank ${k}`).toBe(true);
    expect(o.at(100)).toBeNaN();
    expectSortAgreement(x);
  });

  it("gives the sort's values when the sample misjudges a tail (thresholds too far out: the selections answer)", () => {
    // Every 12th value (the sampled ones at n = 6,400) is far below the rest: the low threshold
    // falls among them, and fewer values than the low tail holds lie at or below it.
    const rnd = lcg(4);
    const n = 6400;
    const low = Float64Array.from({ length: n }, (_, i) => (i % 12 === 0 ? -1 - i : rnd()));
    const high = Float64Array.from({ length: n }, (_, i) => (i % 12 === 0 ? 1 + i : rnd()));
    expectSortAgreement(low);
    expectSortAgreement(high);
  });
});
