// Scoring within a date's cross-section: a factor's raw values winsorized at the 5th and 95th
// percentiles of their group (linear interpolation, R's type 7), standardized (z = (x − mean) /
// sample sd), turned so higher is better and clipped to ±3; a rating's composite is the mean of the
// z-scores its stock has, mapped to 0..10 by its percentile rank among the date's stocks that have
// one. Over typed arrays and index lists: a date of 5,000 stocks scores 21 factors in a few ms.
import { mean, quantile, sampleStandardDeviation } from "simple-statistics";
import { lowerBound } from "../shared/lower-bound.ts";

export const WINSOR = 0.05;
export const Z_CLIP = 3;
/** A sector needs this many values of a factor to be scored on its own; fewer join the whole date. */
export const MIN_SECTOR = 5;

export const round4 = (x: number) => Math.round(x * 1e4) / 1e4;

/** The finite values of `values` at `members` (every index when null), in member order. */
function finiteOf(values: ArrayLike<number>, members: ArrayLike<number> | null): Float64Array {
  const n = members ? members.length : values.length;
  const out = new Float64Array(n);
  let m = 0;
  for (let k = 0; k < n; k++) {
    const v = values[members ? members[k] : k];
    if (Number.isFinite(v)) out[m++] = v;
  }
  return out.subarray(0, m);
}

/** The 5th and 95th percentiles of finite values (NaN, NaN for none), by selection on a copy. */
function winsorBounds(finite: Float64Array): [number, number] {
  if (finite.length === 0) return [NaN, NaN];
  const [lo, hi] = quantile(finite as unknown as number[], [WINSOR, 1 - WINSOR]);
  return [lo, hi];
}

/** `values` clipped to the 5th and 95th percentiles of their finite members (NaN stays NaN). */
export function winsorize(values: readonly number[]): number[] {
  const [lo, hi] = winsorBounds(finiteOf(values, null));
  return values.map((v) => (Number.isFinite(v) ? Math.min(hi, Math.max(lo, v)) : NaN));
}

/**
 * Writes into `out`, at `members` (every index when null), the winsorized z-scores of `values` there
 * times `direction`, clipped to ±Z_CLIP; NaN where a value is not finite. Fewer than two values, or
 * no spread: 0 for each value.
 */
function zScoresInto(
  values: ArrayLike<number>,
  members: ArrayLike<number> | null,
  direction: 1 | -1,
  out: Float64Array,
): void {
  const finite = finiteOf(values, members);
  const [lo, hi] = winsorBounds(finite);
  for (let k = 0; k < finite.length; k++) finite[k] = Math.min(hi, Math.max(lo, finite[k]));
  const many = finite.length >= 2;
  const m = many ? mean(finite as unknown as number[]) : 0;
  const sd = many ? sampleStandardDeviation(finite as unknown as number[]) : 0;
  const n = members ? members.length : values.length;
  for (let k = 0; k < n; k++) {
    const i = members ? members[k] : k;
    const v = values[i];
    if (!Number.isFinite(v)) out[i] = NaN;
    else if (!(sd > 0)) out[i] = 0;
    else out[i] = Math.min(Z_CLIP, Math.max(-Z_CLIP, (direction * (Math.min(hi, Math.max(lo, v)) - m)) / sd));
  }
}

/** Winsorized z-scores of `values` (NaN: no value), times `direction`, clipped to ±Z_CLIP. */
export function zScores(values: ArrayLike<number>, direction: 1 | -1 = 1): Float64Array {
  const out = new Float64Array(values.length);
  zScoresInto(values, null, direction, out);
  return out;
}

/**
 * zScores within groups (`groups`: the member indices of each, e.g. each sector's stocks): a group
 * with at least MIN_SECTOR values is scored on its own; the values of smaller groups (and of stocks
 * in no group) keep their score against every value.
 */
export function groupedZScores(
  values: ArrayLike<number>,
  groups: readonly ArrayLike<number>[],
  direction: 1 | -1 = 1,
): Float64Array {
  const out = new Float64Array(values.length).fill(NaN);
  let scored = 0;
  for (const g of groups) {
    let finite = 0;
    for (let k = 0; k < g.length; k++) if (Number.isFinite(values[g[k]])) finite++;
    if (finite < MIN_SECTOR) continue;
    zScoresInto(values, g, direction, out);
    scored += finite;
  }
  // the values no big group scored: against every value of the date
  let finite = 0;
  for (let i = 0; i < values.length; i++) if (Number.isFinite(values[i])) finite++;
  if (scored < finite) {
    const whole = zScores(values, direction);
    for (let i = 0; i < values.length; i++) if (Number.isNaN(out[i])) out[i] = whole[i];
  }
  return out;
}

/** Member indices of each group: `keys[i]` is item i's group (null: none), groups in first-seen order. */
export function groupsOf(keys: readonly (string | null)[]): Int32Array[] {
  const lists = new Map<string, number[]>();
  keys.forEach((k, i) => {
    if (k === null) return;
    const list = lists.get(k);
    if (list) list.push(i);
    else lists.set(k, [i]);
  });
  return [...lists.values()].map((l) => Int32Array.from(l));
}

/** A z-score as the 0..10 component score users see: 5 + 5z/3 (z of ±3 at the ends). */
export const componentScore = (z: number) => (Number.isFinite(z) ? round4(5 + (5 * z) / Z_CLIP) : NaN);

/** Percentile ranks in 0..10 (ties share the mean rank; a single value is 5); NaN stays NaN. */
export function percentileScores(values: ArrayLike<number>): Float64Array {
  const sorted = finiteOf(values, null).slice().sort();
  const n = sorted.length;
  const out = new Float64Array(values.length).fill(NaN);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (!Number.isFinite(v)) continue;
    // the ranks v holds: [first, last] of its run in the sorted values
    const first = lowerBound(sorted, v);
    const last = lowerBound(sorted, v, true) - 1;
    out[i] = n === 1 ? 5 : (10 * ((first + last) / 2)) / (n - 1);
  }
  return out;
}
