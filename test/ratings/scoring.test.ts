// Winsorized z-scores, sector groups and the 0..10 maps, by hand.
import { describe, expect, it } from "vitest";
import {
  componentScore,
  groupedZScores,
  groupsOf,
  percentileScores,
  winsorize,
  zScores,
} from "../../pipeline/ratings/scoring.ts";

const z = (values: number[], direction: 1 | -1 = 1) => Array.from(zScores(values, direction));

describe("winsorize", () => {
  it("clips to the 5th and 95th percentiles", () => {
    // 1..20, quantiles interpolated at position p × (n − 1): 5 % at 0.95 → 1.95, 95 % at 18.05 → 19.05
    const w = winsorize(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(w[0]).toBeCloseTo(1.95, 12);
    expect(w[19]).toBeCloseTo(19.05, 12);
    expect(w.slice(1, 19)).toEqual(Array.from({ length: 18 }, (_, i) => i + 2));
    expect(winsorize([NaN, 2])).toEqual([NaN, 2]);
  });
});

describe("zScores", () => {
  it("standardizes with the sample deviation, turned by direction, NaN kept", () => {
    // mean 2, sample sd 1
    expect(z([1, 2, 3, NaN])).toEqual([-1, 0, 1, NaN]);
    expect(z([1, 2, 3], -1)).toEqual([1, -0, -1]);
    expect(z([4, 4])).toEqual([0, 0]);
    expect(z([7])).toEqual([0]);
  });

  it("clips at ±3", () => {
    // 94 zeros and six ones: the 95 % quantile (position 94.05) is 1, so nothing is winsorized; mean 0.06,
    // sample sd √((6 × 0.94² + 94 × 0.06²) / 99) = 0.23870: a one is 3.94 sd out, clipped to 3
    const ones = z([...new Array(94).fill(0), ...new Array(6).fill(1)]);
    expect(ones[99]).toBe(3);
    expect(ones[0]).toBeCloseTo(-0.06 / 0.2387, 3);
    // 39 zeros and one 100: the 95 % quantile (position 37.05) is 0, so all are 0: no spread, every z 0
    expect(z([...new Array(39).fill(0), 100]).every((x) => x === 0)).toBe(true);
  });
});

describe("groupedZScores", () => {
  it("lists each group's members in first-seen order", () => {
    expect(groupsOf(["B", "A", null, "B"]).map((g) => Array.from(g))).toEqual([[0, 3], [1]]);
  });

  it("scores a group of five or more alone, smaller groups against every value", () => {
    const values = [1, 2, 3, 4, 5, 100];
    const groups = ["A", "A", "A", "A", "A", "B"];
    const g = groupedZScores(values, groupsOf(groups));
    // A alone: 1..5 winsorized to 1.2 and 4.8 (positions 0.2 and 3.8), mean 3, sample sd √(8.48 / 4) = 1.45602
    const a = [1.2, 2, 3, 4, 4.8].map((x) => (x - 3) / Math.sqrt(8.48 / 4));
    for (let i = 0; i < 5; i++) expect(g[i]).toBeCloseTo(a[i], 12);
    // B (one value) against all six, winsorized to 1.25 .. 76.25 (positions 0.25, 4.75): mean 15.25,
    // sample sd √(4474.25 / 5) = 29.9141; (76.25 − 15.25) / 29.9141
    expect(g[5]).toBeCloseTo(61 / Math.sqrt(4474.25 / 5), 12);
  });
});

describe("0..10 maps", () => {
  it("component score 5 + 5z/3 and percentile ranks with ties sharing their mean rank", () => {
    expect(componentScore(-1)).toBe(3.3333);
    expect(componentScore(3)).toBe(10);
    expect(componentScore(NaN)).toBeNaN();
    // sorted 1 (rank 0), 2 and 2 (ranks 1, 2 → 1.5), 5 (rank 3); score = 10 × rank / 3
    expect(Array.from(percentileScores([5, 2, 1, 2]))).toEqual([10, 5, 0, 5]);
    expect(Array.from(percentileScores([NaN, 3]))).toEqual([NaN, 5]);
  });
});
