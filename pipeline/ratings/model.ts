// The factor model (docs/ratings.md): on the first trading date of each month, every stock that
// trades that day and has traded 21 days gets the six ratings from the factors of factors.ts, scored
// within the date (scoring.ts), and a total. Strictly point in time: the factors read closes up to
// the date and the statements published on or before it (and within 18 months of it). A generator
// of dates, so the caller writes each date's components and keeps only the ratings.
import { formatISO, parseISO, subMonths } from "date-fns";
import type { Company, PricePanel, RatingRow } from "../types.ts";
import { FACTORS, type FactorInputs, MODEL_RATINGS } from "./factors.ts";
import { marketValue } from "./fundamental-factors.ts";
import { equalWeightedMarket, HALF_YEAR, marketRegimes, trailingReturn, volatilityAndBeta } from "./price-factors.ts";
import { componentScore, groupedZScores, groupsOf, percentileScores, round4 } from "./scoring.ts";
import { type StatementsByTicker, statementsAt } from "./statements.ts";

/** A statement older than this many months on the date no longer counts (a company that stopped filing). */
export const STALE_MONTHS = 18;
/** Priced days a stock needs before it is rated. */
export const MIN_DAYS = 21;
/** The rating of a stock with no input for it: the middle of the scale. */
export const NEUTRAL = 5;

/**
 * The components of one date's rated stocks, column by column (row k: the date's k-th rated stock):
 * each factor's raw value and 0..10 score (NaN: no input), the statement the statement factors came
 * from (fiscal year 0 and publish date null: none counted) and how many factors had an input.
 */
export interface DateComponents {
  tickers: string[];
  fiscalYear: Int32Array;
  publishDate: (string | null)[];
  factors: Int32Array;
  /** Per factor (FACTORS order), per stock. */
  raw: Float64Array[];
  score: Float64Array[];
}

export interface ModelDate {
  date: string;
  ratings: RatingRow[];
  components: DateComponents;
}

/** Indices into FACTORS of each rating's factors. */
const RATING_FACTORS = MODEL_RATINGS.map((r) => FACTORS.flatMap((f, j) => (f.rating === r ? [j] : [])));

const round6 = (x: number) => (Number.isFinite(x) ? Math.round(x * 1e6) / 1e6 : NaN);

export function firstTradingDatesOfMonths(dates: readonly string[]): number[] {
  const out: number[] = [];
  for (let d = 0; d < dates.length; d++) if (d === 0 || dates[d].slice(0, 7) !== dates[d - 1].slice(0, 7)) out.push(d);
  return out;
}

/** The model over the panel, one rating date at a time. */
export function* factorModel(
  panel: PricePanel,
  companies: readonly Company[],
  statements: StatementsByTicker,
): Generator<ModelDate> {
  const sectorOf = new Map(companies.map((c) => [c.ticker.toUpperCase(), c.sector]));
  const market = equalWeightedMarket(panel.close, panel.dates.length);
  const regimes = marketRegimes(market);
  const firstPriced = panel.close.map((c) => c.findIndex((v) => !Number.isNaN(v)));
  const upper = panel.tickers.map((t) => t.toUpperCase());
  for (const d of firstTradingDatesOfMonths(panel.dates)) {
    const live: number[] = [];
    panel.close.forEach((c, i) => {
      if (!Number.isNaN(c[d]) && firstPriced[i] >= 0 && d - firstPriced[i] >= MIN_DAYS - 1) live.push(i);
    });
    if (live.length) yield rateDate(panel, d, live, { market, regime: regimes[d], sectorOf, upper, statements });
  }
}

interface DateContext {
  market: Float64Array;
  regime: number;
  sectorOf: Map<string, string>;
  upper: string[];
  statements: StatementsByTicker;
}

/** Every factor's raw value of each live stock (factor-major), and the statements each used. */
function rawFactors(panel: PricePanel, d: number, live: number[], ctx: DateContext) {
  const date = panel.dates[d];
  const since = formatISO(subMonths(parseISO(date), STALE_MONTHS), { representation: "date" });
  const strength = sectorStrengths(panel, d, live, ctx);
  const raw = FACTORS.map(() => new Float64Array(live.length));
  const used = live.map((i, k) => {
    const close = panel.close[i];
    const at = statementsAt(ctx.statements.get(ctx.upper[i]), date, since);
    const { volatility, beta } = volatilityAndBeta(close, ctx.market, d);
    const x: FactorInputs = {
      close,
      d,
      market: ctx.market,
      regime: ctx.regime,
      statements: at,
      marketValue: at ? marketValue(close[d], at.current) : NaN,
      sectorStrength: strength[k],
      volatility,
      beta,
    };
    for (let j = 0; j < FACTORS.length; j++) raw[j][k] = FACTORS[j].raw(x);
    return at?.current ?? null;
  });
  return { raw, used };
}

/** Each live stock's sector's mean 6-month return less the mean over every live stock. */
function sectorStrengths(panel: PricePanel, d: number, live: number[], ctx: DateContext): number[] {
  const sums = new Map<string, [number, number]>();
  let all = 0;
  let n = 0;
  const ret = live.map((i) => trailingReturn(panel.close[i], d, HALF_YEAR));
  live.forEach((i, k) => {
    const s = ctx.sectorOf.get(ctx.upper[i]);
    if (s === undefined || !Number.isFinite(ret[k])) return;
    const acc = sums.get(s) ?? [0, 0];
    acc[0] += ret[k];
    acc[1]++;
    sums.set(s, acc);
    all += ret[k];
    n++;
  });
  return live.map((i) => {
    const acc = sums.get(ctx.sectorOf.get(ctx.upper[i]) ?? "");
    return acc && n ? acc[0] / acc[1] - all / n : NaN;
  });
}

/** Each rating's 0..10 score per live stock: the percentile of the mean of its factors' z-scores. */
function ratingScores(z: Float64Array[], n: number): Float64Array[] {
  return RATING_FACTORS.map((factors) => {
    const sum = new Float64Array(n);
    const count = new Int32Array(n);
    for (const j of factors) {
      const zj = z[j];
      for (let k = 0; k < n; k++) {
        const v = zj[k];
        if (Number.isFinite(v)) {
          sum[k] += v;
          count[k]++;
        }
      }
    }
    for (let k = 0; k < n; k++) sum[k] = count[k] ? sum[k] / count[k] : NaN;
    return percentileScores(sum);
  });
}

function rateDate(panel: PricePanel, d: number, live: number[], ctx: DateContext): ModelDate {
  const date = panel.dates[d];
  const n = live.length;
  const { raw, used } = rawFactors(panel, d, live, ctx);
  const sectors = groupsOf(live.map((i) => ctx.sectorOf.get(ctx.upper[i]) ?? null));
  const z = FACTORS.map((f, j) => groupedZScores(raw[j], f.bySector ? sectors : [], f.direction));
  const scores = ratingScores(z, n);
  const ratings: RatingRow[] = [];
  // each rating's 0..10 (NaN: no input) as the stock's ratings read it
  const [val, gro, ret, rsk, tec, mac] = (
    ["valuation_rating", "growth_rating", "return_rating", "risk_rating", "technical_rating", "macro_rating"] as const
  ).map((r) => scores[MODEL_RATINGS.indexOf(r)]);
  const shown = (v: number) => round4(Number.isFinite(v) ? v : NEUTRAL);
  for (let k = 0; k < n; k++) {
    // total: the equal-weighted mean of the ratings the stock has inputs for
    let sum = 0;
    let m = 0;
    for (const r of scores)
      if (Number.isFinite(r[k])) {
        sum += r[k];
        m++;
      }
    // keys in RATING_NAMES order, as the vendor reader builds them
    ratings.push({
      date,
      ticker: panel.tickers[live[k]],
      total_rating: round4(m ? sum / m : NEUTRAL),
      return_rating: shown(ret[k]),
      growth_rating: shown(gro[k]),
      risk_rating: shown(rsk[k]),
      valuation_rating: shown(val[k]),
      technical_rating: shown(tec[k]),
      macro_rating: shown(mac[k]),
    });
  }
  const factors = new Int32Array(n);
  for (const r of raw) for (let k = 0; k < n; k++) if (Number.isFinite(r[k])) factors[k]++;
  const components: DateComponents = {
    tickers: live.map((i) => panel.tickers[i]),
    fiscalYear: Int32Array.from(used, (s) => s?.fiscalYear ?? 0),
    publishDate: used.map((s) => s?.publishDate ?? null),
    factors,
    raw: raw.map((r) => r.map(round6)),
    score: z.map((zj) => zj.map(componentScore)),
  };
  return { date, ratings, components };
}
