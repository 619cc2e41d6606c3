// Compounding daily returns into calendar periods (weeks ending Monday, months, quarters, years),
// the way QuantStats groups them. Dates ascend, so each period is one contiguous run.
import type { DateParts } from "./dates.ts";

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

export function aggregate(r: ArrayLike<number>, p: DateParts, period: Period, compounded = true): Aggregated {
  const keys: number[] = [];
  const out: number[] = [];
  const first: number[] = [];
  let acc = compounded ? 1 : 0;
  let key = NaN;
  for (let i = 0; i < r.length; i++) {
    const k = periodKey(p, i, period);
    if (k !== key) {
      if (i > 0) out.push(compounded ? acc - 1 : acc);
      keys.push(k);
      first.push(i);
      key = k;
      acc = compounded ? 1 : 0;
    }
    acc = compounded ? acc * (1 + r[i]) : acc + r[i];
  }
  if (r.length) out.push(compounded ? acc - 1 : acc);
  return { keys: Int32Array.from(keys), returns: Float64Array.from(out), first: Int32Array.from(first) };
}
