// The evidence of what a rating predicts (docs/ratings.md, "The evidence"), for whatever ratings a
// snapshot serves: per rating and horizon, the rank correlation (IC) of the rating with the forward
// return on every evaluated rating date, its summary (mean, sample std, IR, t, hit rate), the
// quintiles' mean forward returns and the top quintile's turnover. Pure functions over one date's
// cross-section at a time, so a caller streams the dates and holds one date's stocks.
import { sampleCorrelation } from "simple-statistics";
import { RATING_NAMES } from "../types.ts";

/** Fewer stocks than this at a date (with a rating, a close at D and at D_h): the date is not evaluated. */
export const MIN_STOCKS = 20;
/** Forward horizons in calendar months. */
export const HORIZONS = [1, 3, 6, 12] as const;
export type Horizon = (typeof HORIZONS)[number];
export const QUINTILES = 5;

/**
 * One rating date's stocks: `order` is each row's ticker rank (ties in rating are broken by it);
 * a row whose rating or forward return is not finite does not count.
 */
export interface CrossSection {
  order: ArrayLike<number>;
  rating: ArrayLike<number>;
  forward: ArrayLike<number>;
}

/** What one evaluated date contributes. */
export interface DateEvidence {
  date: string;
  ic: number;
  stocks: number;
  /** Mean forward return of each quintile, lowest ratings first. */
  quintiles: number[];
  /** The `order` values of the top quintile's stocks. */
  top: Set<number>;
}

/**
 * The rows whose value is finite, by value ascending, ties by `order`. A caller evaluating several
 * horizons sorts each rating once, and each horizon's returns once, and filters the sorted rows
 * (evaluateSorted): the per-pair sorts were most of the step's time.
 */
export function sortedRows(value: ArrayLike<number>, order: ArrayLike<number>): Int32Array {
  const rows: number[] = [];
  for (let i = 0; i < value.length; i++) if (Number.isFinite(value[i])) rows.push(i);
  return Int32Array.from(rows).sort((a, b) => value[a] - value[b] || order[a] - order[b]);
}

/**
 * Average ranks (ties share the mean of the positions they span) of the kept rows of `sorted`
 * (ascending by `value`), written at each row's position in `pos`.
 */
function midranks(sorted: Int32Array, value: ArrayLike<number>, keep: Uint8Array, pos: Int32Array, out: Float64Array) {
  const kept = keptRows(sorted, keep, out.length);
  for (let a = 0; a < kept.length; ) {
    let b = a;
    while (b + 1 < kept.length && value[kept[b + 1]] === value[kept[a]]) b++;
    for (let k = a; k <= b; k++) out[pos[kept[k]]] = (a + b) / 2;
    a = b + 1;
  }
}

/** The rows of `sorted` that `keep` marks (`n` of them), in order. */
function keptRows(sorted: Int32Array, keep: Uint8Array, n: number): Int32Array {
  const kept = new Int32Array(n);
  let p = 0;
  for (let j = 0; j < sorted.length; j++) if (keep[sorted[j]] === 1) kept[p++] = sorted[j];
  return kept;
}

/**
 * Spearman's rank correlation (average ranks for ties) as Pearson's correlation of the midranks
 * (simple-statistics' sampleCorrelation); null when either side has no rank variance (every rating
 * equal: the correlation is undefined).
 */
function rankCorrelation(x: Float64Array, y: Float64Array): number | null {
  const ic = sampleCorrelation(x as unknown as number[], y as unknown as number[]);
  return Number.isFinite(ic) ? ic : null;
}

/** The pre-sorted form of a cross-section (sortedRows of the rating and of the forward return). */
export interface SortedSection extends CrossSection {
  byRating: Int32Array;
  byForward: Int32Array;
}

/**
 * One date's evidence over the rows with a finite rating and forward return, or null when it is not
 * evaluated (fewer than MIN_STOCKS such rows, or no rank variance). Quintiles: the rows by rating
 * ascending, ties by ticker; position i of n is in bucket ⌊5i/n⌋.
 */
export function evaluateSorted(date: string, s: SortedSection, minStocks = MIN_STOCKS): DateEvidence | null {
  const rows = s.rating.length;
  const keep = new Uint8Array(rows);
  let n = 0;
  for (let i = 0; i < rows; i++)
    if (Number.isFinite(s.rating[i]) && Number.isFinite(s.forward[i])) {
      keep[i] = 1;
      n++;
    }
  if (n < minStocks) return null;
  const kept = keptRows(s.byRating, keep, n);
  const pos = new Int32Array(rows);
  for (let p = 0; p < n; p++) pos[kept[p]] = p;
  const rx = new Float64Array(n);
  const ry = new Float64Array(n);
  midranks(s.byRating, s.rating, keep, pos, rx);
  midranks(s.byForward, s.forward, keep, pos, ry);
  const ic = rankCorrelation(rx, ry);
  if (ic === null) return null;
  const sums = new Array<number>(QUINTILES).fill(0);
  const counts = new Array<number>(QUINTILES).fill(0);
  const top = new Set<number>();
  for (let p = 0; p < n; p++) {
    const q = Math.floor((QUINTILES * p) / n);
    sums[q] += s.forward[kept[p]];
    counts[q]++;
    if (q === QUINTILES - 1) top.add(s.order[kept[p]]);
  }
  return { date, ic, stocks: n, quintiles: sums.map((v, q) => v / counts[q]), top };
}

/** One date's evidence from an unsorted cross-section (evaluateSorted). */
export const evaluateDate = (date: string, s: CrossSection, minStocks = MIN_STOCKS): DateEvidence | null =>
  evaluateSorted(
    date,
    { ...s, byRating: sortedRows(s.rating, s.order), byForward: sortedRows(s.forward, s.order) },
    minStocks,
  );

/** The summary of a rating at a horizon over its evaluated dates (null where undefined). */
export interface EvidenceSummary {
  dates: number;
  meanIc: number | null;
  icStd: number | null;
  icir: number | null;
  tStat: number | null;
  hitRate: number | null;
  quintileReturns: number[];
  spread: number | null;
  topTurnover: number | null;
  ic: { date: string; ic: number; stocks: number }[];
}

const ratio = (a: number | null, b: number | null) => (a === null || b === null || b === 0 ? null : a / b);

/**
 * Accumulates the evaluated dates of one rating at one horizon, in date order, keeping per date only
 * its IC, quintile means and the previous top quintile (for the turnover).
 */
export class EvidenceAccumulator {
  private readonly ics: DateEvidence["ic"][] = [];
  private readonly series: EvidenceSummary["ic"] = [];
  private readonly quintileSums = new Array<number>(QUINTILES).fill(0);
  private prevTop: Set<number> | null = null;
  private turnoverSum = 0;
  private turnovers = 0;

  add(d: DateEvidence): void {
    this.ics.push(d.ic);
    this.series.push({ date: d.date, ic: d.ic, stocks: d.stocks });
    for (let q = 0; q < QUINTILES; q++) this.quintileSums[q] += d.quintiles[q];
    if (this.prevTop) {
      let entered = 0;
      for (const t of d.top) if (!this.prevTop.has(t)) entered++;
      this.turnoverSum += entered / d.top.size;
      this.turnovers++;
    }
    this.prevTop = d.top;
  }

  summary(): EvidenceSummary {
    const n = this.ics.length;
    const meanIc = n ? this.ics.reduce((a, b) => a + b, 0) / n : null;
    // sample standard deviation (n − 1)
    const icStd =
      n > 1 && meanIc !== null ? Math.sqrt(this.ics.reduce((a, b) => a + (b - meanIc) ** 2, 0) / (n - 1)) : null;
    const quintileReturns = n ? this.quintileSums.map((v) => v / n) : [];
    return {
      dates: n,
      meanIc,
      icStd,
      icir: ratio(meanIc, icStd),
      tStat: ratio(meanIc, icStd === null ? null : icStd / Math.sqrt(n)),
      hitRate: n ? this.ics.filter((v) => v > 0).length / n : null,
      quintileReturns,
      spread: n ? quintileReturns[QUINTILES - 1] - quintileReturns[0] : null,
      topTurnover: this.turnovers ? this.turnoverSum / this.turnovers : null,
      ic: this.series,
    };
  }
}

/** The naive baseline beside the ratings: 12-1 month momentum alone (evidence-dates.ts). */
export const MOMENTUM_BASELINE = "momentum_12_1_baseline";
/** The rows of the evidence, in their published order: the seven ratings, then the baseline. */
export const EVIDENCE_RATINGS = [...RATING_NAMES, MOMENTUM_BASELINE] as const;
export type EvidenceRating = (typeof EVIDENCE_RATINGS)[number];

/** One published row: a rating at a horizon. */
export interface RatingEvidence extends EvidenceSummary {
  rating: EvidenceRating;
  horizon: Horizon;
}
