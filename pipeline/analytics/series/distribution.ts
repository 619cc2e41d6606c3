// rolling_beta, histogram and boxplot.

import { dateParts } from "../../shared/dates.ts";
import { aggregate, type Period } from "../aggregate.ts";
import { mean, quantileSorted } from "../stats.ts";
import { rollingBeta as betaOver } from "./rolling.ts";
import { monthly } from "./simple.ts";
import type { Named, SeriesBuilder, SeriesObject } from "./types.ts";

/** Two subject series (126- and 252-day windows); none for the benchmark. */
export const rollingBeta: SeriesBuilder = (subject, benchmark) => {
  if (!benchmark) throw new Error("rolling_beta requires a benchmark");
  return [126, 252].map((window) => {
    const b = betaOver(subject.returns.returns, benchmark.returns.returns, window);
    return {
      name: subject.name,
      window,
      data: Array.from(b, (v, k) => ({
        date: subject.returns.dates[k + window - 1],
        return: Number.isFinite(v) ? v : (null as unknown as number),
      })),
    };
  });
};

const BINS = 20;

/** Monthly returns with 20 equal-width bins; a benchmark shares the subject's edges. */
export const histogram: SeriesBuilder = (subject, benchmark) => {
  const sets = [subject, ...(benchmark ? [benchmark] : [])].map((s) => ({
    name: s.name,
    data: monthly(s).map(({ date, return: r }) => ({ date, return: r })),
  }));
  const all = sets.flatMap((s) => s.data.map((d) => d.return));
  const lo = all.length ? Math.min(...all) : 0;
  const hi = all.length ? Math.max(...all) : 0;
  const width = (hi - lo) / BINS || 1; // all values equal: unit-wide bins starting at the value
  const edges = Array.from({ length: BINS + 1 }, (_, k) => (k === BINS && hi > lo ? hi : lo + k * width));
  return sets.map((s) => {
    const counts = new Array<number>(BINS).fill(0);
    for (const d of s.data) {
      // Bins are [start, end), the last one closed so the maximum falls inside it; the quotient is
      // corrected against the published edges so a value on an edge lands where the edges say.
      let k = Math.min(BINS - 1, Math.max(0, Math.floor((d.return - lo) / width)));
      if (k > 0 && d.return < edges[k]) k--;
      else if (k < BINS - 1 && d.return >= edges[k + 1]) k++;
      counts[k]++;
    }
    return { ...s, bins: counts.map((count, k) => ({ start: edges[k], end: edges[k + 1], count })) };
  });
};

const PERIODS: [string, Period | null][] = [
  ["Daily", null],
  ["Weekly", "week"],
  ["Monthly", "month"],
  ["Quarterly", "quarter"],
  ["Yearly", "year"],
];

/**
 * Five-number summary with Tukey whiskers: the most extreme data points within the fences
 * q1 − 1.5 IQR and q3 + 1.5 IQR. Quartiles and median by linear interpolation between order
 * statistics (Hyndman–Fan type 7, the numpy/pandas default QuantStats' distribution() uses).
 */
export function boxStats(period: string, x: Float64Array): Record<string, number | string> {
  const s = Float64Array.from(x).sort();
  const q1 = quantileSorted(s, 0.25),
    q3 = quantileSorted(s, 0.75);
  const lowFence = q1 - 1.5 * (q3 - q1),
    highFence = q3 + 1.5 * (q3 - q1);
  let whiskerLow = NaN,
    whiskerHigh = NaN;
  for (const v of s)
    if (v >= lowFence) {
      whiskerLow = v;
      break;
    }
  for (let i = s.length - 1; i >= 0; i--)
    if (s[i] <= highFence) {
      whiskerHigh = s[i];
      break;
    }
  const n = (v: number) => (Number.isFinite(v) ? v : (null as unknown as number));
  return {
    period,
    min: n(s[0]),
    q1: n(q1),
    median: n(quantileSorted(s, 0.5)),
    q3: n(q3),
    max: n(s[s.length - 1]),
    mean: n(mean(s)),
    whiskerLow: n(whiskerLow),
    whiskerHigh: n(whiskerHigh),
    count: s.length,
  };
}

function box(s: Named): SeriesObject {
  const parts = dateParts(s.returns.dates);
  return {
    name: s.name,
    data: PERIODS.map(([label, p]) =>
      boxStats(label, p ? aggregate(s.returns.returns, parts, p).returns : s.returns.returns),
    ),
  };
}

export const boxplot: SeriesBuilder = (subject, benchmark) =>
  benchmark ? [box(subject), box(benchmark)] : [box(subject)];
