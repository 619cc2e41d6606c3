// Metrics against a benchmark (its returns already aligned on the subject's dates).
import { covariance } from "../stats.ts";
import type { SeriesContext } from "./context.ts";

/**
 * A subject and its benchmark over the same dates; the subject's and benchmark's own figures come from their contexts.
 */
export class Pair {
  private cache = new Map<string, number>();
  constructor(
    readonly subject: SeriesContext,
    readonly bench: SeriesContext,
  ) {}
  get r(): Float64Array {
    return this.subject.r;
  }
  get b(): Float64Array {
    return this.bench.r;
  }
  /** A figure of the pair computed once per key (a row's value serves both columns). */
  memo(key: string, f: () => number): number {
    let v = this.cache.get(key);
    if (v === undefined) {
      v = f();
      this.cache.set(key, v);
    }
    return v;
  }
  /** covariance(r, b). */
  cov(): number {
    return this.memo("cov", () => covariance(this.r, this.b, this.subject.mean(), this.bench.mean()));
  }
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

// correlation(x, y) = covariance(x, y) / (std(x) · std(y)); the products are commutative, so
// correlation(b, r) is the same number as correlation(r, b).
export const rSquared = (p: Pair) => (p.cov() / (p.subject.std() * p.bench.std())) ** 2;

let diff = new Float64Array(0);
/** mean(r − b) / std(r − b), as those two functions compute them (the sum taken while r − b is made, once for both). */
export function informationRatio(p: Pair): number {
  const n = p.r.length;
  // r − b in a buffer kept between calls: a table's arrays are ~6,000 long, one per stock and benchmark
  if (diff.length < n) diff = new Float64Array(Math.max(n, 2 * diff.length));
  const d = diff.subarray(0, n);
  const r = p.r,
    b = p.b;
  let s = 0;
  for (let i = 0; i < n; i++) s += d[i] = r[i] - b[i];
  const m = n ? s / n : NaN;
  if (n - 1 <= 0) return m / NaN;
  let ss = 0;
  for (let i = 0; i < n; i++) ss += (d[i] - m) ** 2;
  return m / Math.sqrt(ss / (n - 1));
}

export function beta(p: Pair): number {
  return p.memo("beta", () => {
    const v = p.cov() / p.bench.memo("selfCov", () => covariance(p.b, p.b, p.bench.mean(), p.bench.mean()));
    return Number.isNaN(v) ? 0 : v; // QuantStats' greeks fill NaN with 0
  });
}

export function alpha(p: Pair): number {
  const v = (p.subject.mean() - beta(p) * p.bench.mean()) * 252;
  return Number.isNaN(v) ? 0 : v;
}

export const correlationOf = (p: Pair) => p.cov() / (p.bench.std() * p.subject.std());

export function treynor(p: Pair): number {
  const b = beta(p);
  return b === 0 ? 0 : (p.subject.growth() - 1) / b;
}
