// Metrics against a benchmark (its returns already aligned on the subject's dates).
import { correlation, covariance, mean, std } from "../stats.ts";
import { comp } from "./returns.ts";

export interface Pair {
  r: Float64Array;
  b: Float64Array;
}

/**
 * QuantStats' match_dates: returns before the later of the two series' first non-zero returns
 * count as 0 in both (the dates stay; the 0.0 of a series' first date is the usual case).
 */
export function matchStart(r: ArrayLike<number>, b: ArrayLike<number>): number {
  const firstNonZero = (x: ArrayLike<number>) => {
    for (let i = 0; i < x.length; i++) if (x[i] !== 0) return i;
    return 0;
  };
  return Math.max(firstNonZero(r), firstNonZero(b));
}

export const rSquared = (p: Pair) => correlation(p.r, p.b) ** 2;

export function informationRatio(p: Pair): number {
  const d = p.r.map((x, i) => x - p.b[i]);
  return mean(d) / std(d);
}

export function beta(p: Pair): number {
  const v = covariance(p.r, p.b) / covariance(p.b, p.b);
  return Number.isNaN(v) ? 0 : v; // QuantStats' greeks fill NaN with 0
}

export function alpha(p: Pair): number {
  const v = (mean(p.r) - beta(p) * mean(p.b)) * 252;
  return Number.isNaN(v) ? 0 : v;
}

export const correlationOf = (p: Pair) => correlation(p.b, p.r);

export function treynor(p: Pair): number {
  const b = beta(p);
  return b === 0 ? 0 : comp(p.r) / b;
}
