// The daily return convention (contract §4) and benchmark alignment on a subject's dates.

import { dateParts } from "../shared/dates.ts";
import { lowerBound } from "../shared/lower-bound.ts";
import type { LevelSeries, ReturnSeries } from "../types.ts";

/** First priced date 0.0, then close to close over priced dates; NaN prices are no-price days. */
export function stockReturns(dates: string[], prices: Float64Array): ReturnSeries {
  const ds: string[] = [];
  const out: number[] = [];
  let prev = NaN;
  for (let i = 0; i < dates.length; i++) {
    const p = prices[i];
    if (Number.isNaN(p)) continue;
    ds.push(dates[i]);
    out.push(Number.isNaN(prev) ? 0 : p / prev - 1);
    prev = p;
  }
  return { dates: ds, returns: Float64Array.from(out) };
}

// Many stocks share one dates array (series-read.ts): their aligned benchmark is computed once.
const aligned = new WeakMap<Float64Array, WeakMap<string[], ReturnSeries>>();

/**
 * The benchmark's returns on the subject's dates: 0.0 on the first, then from the benchmark's
 * level on one subject date (as of: its latest level on or before) to the next, so a gap in the
 * subject compounds the benchmark over the gap.
 */
export function alignBenchmark(subjectDates: string[], bench: LevelSeries): ReturnSeries {
  let byDates = aligned.get(bench.levels);
  if (!byDates) {
    byDates = new WeakMap();
    aligned.set(bench.levels, byDates);
  }
  const hit = byDates.get(subjectDates);
  if (hit && hit.returns.length === subjectDates.length) return hit;
  const made = alignFresh(subjectDates, bench);
  byDates.set(subjectDates, made);
  return made;
}

function alignFresh(subjectDates: string[], bench: LevelSeries): ReturnSeries {
  const n = subjectDates.length;
  const out = new Float64Array(n);
  let j = -1;
  let prev = NaN;
  for (let i = 0; i < n; i++) {
    while (j + 1 < bench.dates.length && bench.dates[j + 1] <= subjectDates[i]) j++;
    const level = j >= 0 ? bench.levels[j] : NaN;
    out[i] = i === 0 || Number.isNaN(prev) || Number.isNaN(level) ? 0 : level / prev - 1;
    if (!Number.isNaN(level)) prev = level;
  }
  return { dates: subjectDates, returns: out };
}

/** Returns on dates after latest − years × 365.25 days; a longer period keeps the whole history. */
export function sliceByPeriod(series: ReturnSeries, years: number): ReturnSeries {
  const n = series.dates.length;
  if (n === 0) return series;
  const days = dateParts(series.dates).day;
  const cutoff = days[n - 1] - years * 365.25;
  let i = 0;
  while (i < n && days[i] <= cutoff) i++;
  return i === 0 ? series : { dates: series.dates.slice(i), returns: series.returns.slice(i) };
}

/**
 * Returns dated within [start, end] (either may be absent; issue #41's window). The first kept
 * return is still the one from the close before it, so a window's cumulative return runs from
 * that close, and a window covering every date is the series itself.
 */
export function sliceByWindow(series: ReturnSeries, start?: string, end?: string): ReturnSeries {
  const from = start === undefined ? 0 : lowerBound(series.dates, start);
  const to = end === undefined ? series.dates.length : lowerBound(series.dates, end, true);
  if (from === 0 && to === series.dates.length) return series;
  const hi = Math.max(from, to);
  return { dates: series.dates.slice(from, hi), returns: series.returns.slice(from, hi) };
}
