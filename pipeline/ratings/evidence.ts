// The evidence of what a rating predicts (docs/ratings.md, "The evidence"), for whatever ratings a
// snapshot serves: per rating and horizon, the rank correlation (IC) of the rating with the forward
// return on every evaluated rating date, its summary (mean, sample std, IR, t, hit rate), the
// quintiles' mean forward returns and the top quintile's turnover. Pure functions over one date's
// cross-section at a time, so a caller streams the dates and holds one date's stocks.
import { sampleRankCorrelation } from "simple-statistics";
import { RATING_NAMES } from "../types.ts";

/** Fewer stocks than this at a date (with a rating, a close at D and at D_h): the date is not evaluated. */
export const MIN_STOCKS = 20;
/** Forward horizons in calendar months. */
export const HORIZONS = [1, 3, 6, 12] as const;
export type Horizon = (typeof HORIZONS)[number];
export const QUINTILES = 5;

/** One rating date's evaluated cross-section: rows sorted by ticker (`order` is the ticker's rank). */
export interface CrossSection {
  /** The ticker's position in ticker order (ties in rating are broken by it). */
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
 * Spearman's rank correlation with average ranks for ties (simple-statistics' midranks); null when
 * either side has no rank variance (every rating equal: the correlation is undefined).
 */
export function spearman(x: ArrayLike<number>, y: ArrayLike<number>): number | null {
  const ic = sampleRankCorrelation(Array.from(x), Array.from(y));
  return Number.isFinite(ic) ? ic : null;
}

/**
 * Positions 0..n-1 ordered by rating ascending, ties by ticker; position i is in bucket ⌊5i/n⌋.
 * Returns each bucket's mean forward return and the top bucket's members.
 */
export function quintiles(s: CrossSection): { means: number[]; top: Set<number> } {
  const n = s.rating.length;
  const idx = Array.from({ length: n }, (_, i) => i).sort(
    (a, b) => s.rating[a] - s.rating[b] || s.order[a] - s.order[b],
  );
  const sums = new Array<number>(QUINTILES).fill(0);
  const counts = new Array<number>(QUINTILES).fill(0);
  const top = new Set<number>();
  for (let i = 0; i < n; i++) {
    const q = Math.floor((QUINTILES * i) / n);
    sums[q] += s.forward[idx[i]];
    counts[q]++;
    if (q === QUINTILES - 1) top.add(s.order[idx[i]]);
  }
  return { means: sums.map((v, q) => v / counts[q]), top };
}

/** One date's evidence, or null when it is not evaluated (fewer than MIN_STOCKS, or no rank variance). */
export function evaluateDate(date: string, s: CrossSection): DateEvidence | null {
  if (s.rating.length < MIN_STOCKS) return null;
  const ic = spearman(s.rating, s.forward);
  if (ic === null) return null;
  const { means, top } = quintiles(s);
  return { date, ic, stocks: s.rating.length, quintiles: means, top };
}

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
