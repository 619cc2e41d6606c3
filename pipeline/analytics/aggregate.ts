// Compounding daily returns into calendar periods (weeks ending Monday, months, quarters, years),
// the way QuantStats groups them. Dates ascend, so each period is one contiguous run.
import type { DateParts } from "../shared/dates.ts";

export type Period = "week" | "month" | "quarter" | "year";

export interface Aggregated {
  /** Period key (year, year×12+month−1, year×4+quarter, or the epoch day of the week's Monday). */
  keys: Int32Array;
  returns: Float64Array;
  /** Index of each period's first daily return. */
  first: Int32Array;
}

export function periodKey(p: DateParts, i: number, period: Period): number {
  switch (period) {
    case "year":
      return p.year[i];
    case "month":
      return p.year[i] * 12 + p.month[i] - 1;
    case "quarter":
      return p.year[i] * 4 + Math.floor((p.month[i] - 1) / 3);
    case "week": {
      // Weeks end on Monday (pandas "W-MON"): the Monday on or after the date. Epoch day 4 is a Monday.
      const z = p.day[i];
      return z + ((7 - ((z + 3) % 7)) % 7);
    }
  }
}

type Bounds = Pick<Aggregated, "keys" | "first">;

// The periods' keys and first indices depend on the dates alone: computed once per dates array
// (every stock of a metric partition with the same dates, and each of its tables, shares them).
const boundsCache = new WeakMap<DateParts, Map<Period, Bounds>>();

/** Keys and first indices of the periods of the first `n` dates of `p`. */
function periodBounds(p: DateParts, period: Period, n: number): Bounds {
  const whole = n === p.day.length;
  const cached = whole ? boundsCache.get(p)?.get(period) : undefined;
  if (cached) return cached;
  const keys: number[] = [];
  const first: number[] = [];
  let key = NaN;
  for (let i = 0; i < n; i++) {
    const k = periodKey(p, i, period);
    if (k !== key) {
      keys.push(k);
      first.push(i);
      key = k;
    }
  }
  const b = { keys: Int32Array.from(keys), first: Int32Array.from(first) };
  if (whole) {
    let m = boundsCache.get(p);
    if (!m) {
      m = new Map();
      boundsCache.set(p, m);
    }
    m.set(period, b);
  }
  return b;
}

export function aggregate(r: ArrayLike<number>, p: DateParts, period: Period, compounded = true): Aggregated {
  const { keys, first } = periodBounds(p, period, r.length);
  const out = new Float64Array(keys.length);
  for (let k = 0; k < keys.length; k++) {
    const end = k + 1 < keys.length ? first[k + 1] : r.length;
    let acc = compounded ? 1 : 0;
    for (let i = first[k]; i < end; i++) acc = compounded ? acc * (1 + r[i]) : acc + r[i];
    out[k] = compounded ? acc - 1 : acc;
  }
  return { keys, returns: out, first };
}
