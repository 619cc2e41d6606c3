// The win/loss rows read one pass over the returns' signs (pipeline/analytics/metrics/context.ts),
// done without a branch per return. Its figures must be the branching loop's, bit for bit: the
// published digits come from them.
import { describe, expect, it } from "vitest";
import { signs, signsBranching } from "../../pipeline/analytics/metrics/context.ts";

function lcg(seed: number) {
  let x = seed;
  return () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648;
  };
}

function expectSame(r: Float64Array) {
  const a = signs(r),
    b = signsBranching(r);
  for (const k of Object.keys(b) as (keyof typeof b)[])
    expect(Object.is(a[k], b[k]), `${k}: ${a[k]} vs ${b[k]}`).toBe(true);
}

describe("signs", () => {
  it("matches the branching loop on returns with zeros of both signs", () => {
    const rnd = lcg(7);
    for (const n of [0, 1, 2, 100, 6426]) {
      const r = Float64Array.from({ length: n }, (_, i) =>
        i % 17 === 0 ? 0 : i % 23 === 0 ? -0 : (rnd() - 0.49) * 0.05,
      );
      expectSame(r);
    }
    expectSame(Float64Array.from([-0, -0, 0]));
    expectSame(Float64Array.from([0.01, 0.02, 0, 0.03, -0.01, -0.02, -0.03, -0.04, 0.05]));
  });

  it("counts runs, sums and squares as a hand computation does", () => {
    // gains 0.01, 0.02, 0.03, 0.05 (runs of 2, 1, 1); losses −0.01 … −0.04 (one run of 4); one zero
    const s = signs(Float64Array.from([0.01, 0.02, 0, 0.03, -0.01, -0.02, -0.03, -0.04, 0.05]));
    expect(s).toMatchObject({ up: 4, down: 4, nonZero: 8, atLeastZero: 5, longestUp: 2, longestDown: 4 });
    expect(s.upSum).toBeCloseTo(0.11, 15);
    expect(s.downSum).toBeCloseTo(-0.1, 15);
    expect(s.downSq).toBeCloseTo(0.0001 + 0.0004 + 0.0009 + 0.0016, 15);
  });

  it("answers with the branching loop when a return is not finite", () => {
    for (const bad of [NaN, Infinity, -Infinity]) {
      const r = Float64Array.from([0.01, -0.02, bad, 0.03, -0.01]);
      expectSame(r);
      expect(Number.isNaN(signs(r).upSum)).toBe(false);
    }
  });
});
