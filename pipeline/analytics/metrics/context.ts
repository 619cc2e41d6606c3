// Everything several metrics share, computed once per series and lazily: the calendar parts,
// the order statistics, the drawdown series and its periods, the per-period aggregates, and the
// moments and win/loss figures many rows reuse (Sharpe, Sortino, their smart and probabilistic
// forms, VaR, Kelly, CPC … all start from the same few sums). Each is the very function a row
// would call, evaluated once: the numbers are those of computing every row on its own.

import { type DateParts, dateParts } from "../../shared/dates.ts";
import type { ReturnSeries } from "../../types.ts";
import { type Aggregated, aggregate, type Period } from "../aggregate.ts";
import { OrderStats } from "../order-stats.ts";
import { kurtosis, mean, skew, std, sum } from "../stats.ts";

export interface DrawdownPeriod {
  start: number; // index of the first day below the peak
  end: number; // index of the last day below the peak
  days: number; // calendar days, end − start + 1
  maxDrawdown: number; // the period's deepest drawdown (a fraction, <= 0)
}

// One context per (dates, returns) pair of arrays: the plain table, the tables against each
// benchmark and a benchmark's own column over many stocks of the same dates share its work.
const contexts = new WeakMap<Float64Array, SeriesContext>();

export class SeriesContext {
  readonly r: Float64Array;
  readonly dates: string[];
  readonly parts: DateParts;
  private cache = new Map<string, unknown>();
  private cells = new Map<object, unknown>();

  /** The context of these very arrays (callers never mutate a series once built). */
  static of(s: ReturnSeries): SeriesContext {
    const c = contexts.get(s.returns);
    if (c && c.dates === s.dates) return c;
    const made = new SeriesContext(s);
    contexts.set(s.returns, made);
    return made;
  }

  constructor(s: ReturnSeries) {
    this.r = s.returns;
    this.dates = s.dates;
    this.parts = dateParts(s.dates);
  }

  get n(): number {
    return this.r.length;
  }

  /** A value of this series computed once per key. */
  memo<T>(key: string, f: () => T): T {
    let v = this.cache.get(key) as T | undefined;
    if (v === undefined && !this.cache.has(key)) {
      v = f();
      this.cache.set(key, v);
    }
    return v as T;
  }

  /** A value derived from this series alone (a metric cell), computed once per key. */
  remember<T>(key: object, f: () => T): T {
    let v = this.cells.get(key) as T | undefined;
    if (v === undefined && !this.cells.has(key)) {
      v = f();
      this.cells.set(key, v);
    }
    return v as T;
  }

  /** The returns' ranks as their ascending sort holds them (extremes and tail quantiles). */
  order(): OrderStats {
    return this.memo("order", () => new OrderStats(this.r));
  }

  agg(period: Period): Aggregated {
    return this.memo(`agg:${period}`, () => aggregate(this.r, this.parts, period));
  }

  mean(): number {
    return this.memo("mean", () => mean(this.r));
  }
  std(): number {
    return this.memo("std", () => std(this.r));
  }
  sum(): number {
    return this.memo("sum", () => sum(this.r));
  }
  skew(): number {
    return this.memo("skew", () => skew(this.r));
  }
  kurtosis(): number {
    return this.memo("kurt", () => kurtosis(this.r));
  }

  /** Π (1 + r): the compounded value of 1, the one product the cumulative return, CAGR and the geometric mean share. */
  growth(): number {
    return this.memo("growth", () => {
      let v = 1;
      for (let i = 0; i < this.r.length; i++) v *= 1 + this.r[i];
      return v;
    });
  }

  /** The sums, counts and runs of the positive and negative returns, in one pass (see `signs`). */
  signs(): Signs {
    return this.memo("signs", () => signs(this.r));
  }

  /** Value / running peak − 1 of the compounded value (starting at 1 + r[0]). */
  drawdown(): Float64Array {
    return this.memo("dd", () => drawdownSeries(this.r));
  }

  /** Drawdown periods as QuantStats' drawdown_details finds them. */
  drawdownPeriods(): DrawdownPeriod[] {
    return this.memo("ddp", () => {
      const dd = this.drawdown();
      const out: DrawdownPeriod[] = [];
      let start = -1;
      let min = 0;
      for (let i = 0; i <= dd.length; i++) {
        const inDd = i < dd.length && dd[i] !== 0;
        if (inDd && start < 0) {
          start = i;
          min = 0;
        }
        if (inDd) min = Math.min(min, dd[i]);
        if (!inDd && start >= 0) {
          const end = i - 1;
          out.push({ start, end, days: this.parts.day[end] - this.parts.day[start] + 1, maxDrawdown: min });
          start = -1;
        }
      }
      return out;
    });
  }
}

/**
 * What the win/loss rows read, each accumulated in the order its own loop would: Σ of the returns
 * above 0 (also the Σ of those at or above 0: adding a zero changes no sum), Σ and Σ² of those
 * below 0, the counts, and the longest runs above and below 0.
 */
export interface Signs {
  upSum: number;
  downSum: number;
  downSq: number;
  up: number;
  down: number;
  nonZero: number;
  atLeastZero: number;
  longestUp: number;
  longestDown: number;
}

/**
 * A stock's returns change sign at random, so a branch per return is mispredicted about half the
 * time (3–4× the cost of the pass). Here the branches are arithmetic: (x + |x|)/2 is x above 0 and
 * 0 otherwise, (x − |x|)/2 likewise below 0, both exact; adding 0 leaves a sum as it was, so every
 * figure is bit for bit what the branching loop gives. Only ±Infinity and NaN break that
 * arithmetic: the branching loop then answers.
 */
export function signs(r: ArrayLike<number>): Signs {
  let upSum = 0,
    downSum = 0,
    downSq = 0,
    up = 0,
    down = 0,
    zero = 0,
    runUp = 0,
    runDown = 0,
    longestUp = 0,
    longestDown = 0;
  for (let i = 0; i < r.length; i++) {
    const x = r[i];
    const a = Math.abs(x);
    const pos = (x + a) * 0.5;
    const neg = (x - a) * 0.5;
    upSum += pos;
    downSum += neg;
    downSq += neg * neg;
    const isUp = +(x > 0),
      isDown = +(x < 0);
    up += isUp;
    down += isDown;
    zero += +(x === 0);
    runUp = (runUp + 1) * isUp;
    runDown = (runDown + 1) * isDown;
    longestUp = Math.max(longestUp, runUp);
    longestDown = Math.max(longestDown, runDown);
  }
  if (Number.isNaN(upSum + downSum + downSq)) return signsBranching(r);
  return { upSum, downSum, downSq, up, down, nonZero: r.length - zero, atLeastZero: up + zero, longestUp, longestDown };
}

/** The same figures with a branch per return: the reference, and the answer for non-finite returns. */
export function signsBranching(r: ArrayLike<number>): Signs {
  let upSum = 0,
    downSum = 0,
    downSq = 0,
    up = 0,
    down = 0,
    nonZero = 0,
    atLeastZero = 0,
    runUp = 0,
    runDown = 0,
    longestUp = 0,
    longestDown = 0;
  for (let i = 0; i < r.length; i++) {
    const x = r[i];
    if (x > 0) {
      upSum += x;
      up++;
    }
    if (x < 0) {
      downSum += x;
      downSq += x * x;
      down++;
    }
    if (x !== 0) nonZero++;
    if (x >= 0) atLeastZero++;
    runUp = x > 0 ? runUp + 1 : 0;
    runDown = x < 0 ? runDown + 1 : 0;
    if (runUp > longestUp) longestUp = runUp;
    if (runDown > longestDown) longestDown = runDown;
  }
  return { upSum, downSum, downSq, up, down, nonZero, atLeastZero, longestUp, longestDown };
}

export function drawdownSeries(r: ArrayLike<number>): Float64Array {
  const dd = new Float64Array(r.length);
  let v = 1;
  let peak = -Infinity;
  for (let i = 0; i < r.length; i++) {
    v *= 1 + r[i];
    if (v > peak) peak = v;
    dd[i] = v / peak - 1;
  }
  return dd;
}
