// Scoring within a date's cross-section: a factor's raw values winsorized at the 5th and 95th
// percentiles of their group, standardized (z = (x − mean) / sample sd), turned so higher is better
// and clipped to ±3; a rating's composite is the mean of the z-scores its stock has, mapped to 0..10
// by its percentile rank among the date's stocks that have one.
import { mean, quantileSorted, sampleStandardDeviation } from "simple-statistics";

export const WINSOR = 0.05;
export const Z_CLIP = 3;
/** A sector needs this many values of a factor to be scored on its own; fewer join the whole date. */
export const MIN_SECTOR = 5;

export const round4 = (x: number) => Math.round(x * 1e4) / 1e4;

/** `values` clipped to the `p` and 1 − `p` quantiles of their finite members (NaN stays NaN). */
export function winsorize(values: readonly number[], p = WINSOR): number[] {
  const sorted = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (sorted.length === 0) return [...values];
  const lo = quantileSorted(sorted, p);
  const hi = quantileSorted(sorted, 1 - p);
  return values.map((v) => (Number.isFinite(v) ? Math.min(hi, Math.max(lo, v)) : NaN));
}

/**
 * Winsorized z-scores of `values` (NaN: no value), times `direction`, clipped to ±Z_CLIP. Fewer than
 * two values, or no spread: 0 for each value.
 */
export function zScores(values: readonly number[], direction: 1 | -1 = 1): number[] {
  const w = winsorize(values);
  const finite = w.filter(Number.isFinite);
  if (finite.length < 2) return w.map((v) => (Number.isFinite(v) ? 0 : NaN));
  const m = mean(finite);
  const sd = sampleStandardDeviation(finite);
  return w.map((v) => {
    if (!Number.isFinite(v)) return NaN;
    if (!(sd > 0)) return 0;
    return Math.min(Z_CLIP, Math.max(-Z_CLIP, (direction * (v - m)) / sd));
  });
}

/**
 * zScores within groups: each group (`groupOf`, e.g. the sector) with at least MIN_SECTOR values is
 * scored on its own; the values of smaller groups (and of no group) are scored against every value.
 */
export function groupedZScores(
  values: readonly number[],
  groupOf: (i: number) => string | null,
  direction: 1 | -1 = 1,
): number[] {
  const members = new Map<string, number[]>();
  values.forEach((v, i) => {
    const g = groupOf(i);
    if (g === null || !Number.isFinite(v)) return;
    const list = members.get(g) ?? [];
    list.push(i);
    members.set(g, list);
  });
  const whole = zScores(values, direction);
  const out = [...whole];
  for (const list of members.values()) {
    if (list.length < MIN_SECTOR) continue;
    const z = zScores(
      list.map((i) => values[i]),
      direction,
    );
    list.forEach((i, k) => {
      out[i] = z[k];
    });
  }
  return out;
}

/** A z-score as the 0..10 component score users see: 5 + 5z/3 (z of ±3 at the ends). */
export const componentScore = (z: number) => (Number.isFinite(z) ? round4(5 + (5 * z) / Z_CLIP) : NaN);

/** Percentile ranks in 0..10 (ties share the mean rank; a single value is 5); NaN stays NaN. */
export function percentileScores(values: readonly number[]): number[] {
  const idx = values.map((v, i) => [v, i] as const).filter(([v]) => Number.isFinite(v));
  idx.sort((a, b) => a[0] - b[0]);
  const out = new Array<number>(values.length).fill(NaN);
  const n = idx.length;
  for (let i = 0; i < n; ) {
    let j = i;
    while (j + 1 < n && idx[j + 1][0] === idx[i][0]) j++;
    const score = n === 1 ? 5 : (10 * ((i + j) / 2)) / (n - 1);
    for (let k = i; k <= j; k++) out[idx[k][1]] = score;
    i = j + 1;
  }
  return out;
}
