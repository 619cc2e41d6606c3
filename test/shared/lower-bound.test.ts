import { describe, expect, it } from "vitest";
import { lowerBound } from "../../pipeline/shared/lower-bound.ts";

// Expected indices counted by hand on the arrays below.
describe("lowerBound", () => {
  const xs = [2, 4, 4, 4, 7];
  const below = (key: number) => lowerBound(xs.length, (i) => xs[i] < key);
  const atMost = (key: number) => lowerBound(xs.length, (i) => xs[i] <= key);

  it("finds the first element not before the key", () => {
    expect([1, 2, 3, 4, 5, 7, 8].map(below)).toEqual([0, 0, 1, 1, 4, 4, 5]);
  });

  it("gives the last element <= key as the bound of `<=` minus one (-1 before the first)", () => {
    expect([1, 2, 4, 6, 7, 9].map((k) => atMost(k) - 1)).toEqual([-1, 0, 3, 3, 4, 4]);
  });

  it("answers 0 on an empty range", () => {
    expect(lowerBound(0, () => true)).toBe(0);
  });
});
