// Everything several metrics share, computed once per series and lazily: the calendar parts,
// the order statistics, the drawdown series and its periods, the per-period aggregates, and the
// moments and win/loss figures many rows reuse (Sharpe, Sortino, their smart and probabilistic
// forms, VaR, Kelly, CPC … all start from the same few sums). Each is the very function a row
// would call, evaluated once: the numbers are those of computing every row on its own.
import type { ReturnSeries } from "../../types.ts";
import { aggregate, type Aggregated, type Period } from "../aggregate.ts";
import { dateParts, type DateParts } from "../dates.ts";
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
    if (v === undefined && !this.cache.has(key)) this.cache.set(key, (v = f()));
    return v as T;
  }

  /** A value derived from this series alone (a metric cell), computed once per key. */
  remember<T>(key: object, f: () => T): T {
    let v = this.cells.get(key) as T | undefined;
    if (v === undefined && !this.cells.has(key)) this.cells.set(key, (v = f()));
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
