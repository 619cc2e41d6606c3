import { describe, expect, it } from "vitest";
import { lowerBound } from "../../pipeline/shared/lower-bound.ts";

// Expected indices counted by hand on the arrays below.
describe("lowerBound", () => {
  const xs = [2, 4, 4, 4, 7];
  const below = (key: number) => lowerBound(xs, key);
  const atMost = (key: number) => lowerBound(xs, key, true);

  it("finds the first element not before the key", () => {
    expect([1, 2, 3, 4, 5, 7, 8].map(below)).toEqual([0, 0, 1, 1, 4, 4, 5]);
  });

  it("gives the last element <= key as the bound of `<=` minus one (-1 before the first)", () => {
    expect([1, 2, 4, 6, 7, 9].map((k) => atMost(k) - 1)).toEqual([-1, 0, 3, 3, 4, 4]);
  });

  it("searches [0, to) only, and strings as well as numbers", () => {
    expect(lowerBound(xs, 7, false, 3)).toBe(3);
    expect(lowerBound([], 1)).toBe(0);
    expect(["2024-01-02", "2024-01-05"].map((_, i, d) => lowerBound(d, ["2024-01-03", "2024-01-05"][i]))).toEqual([
      1, 1,
    ]);
    expect(lowerBound(["AA", "MM"], "MM", true)).toBe(2);
  });
});
