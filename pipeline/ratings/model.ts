// The factor model (docs/ratings.md): on the first trading date of each month, every stock that
// trades that day and has traded 21 days gets the six ratings from the factors of factors.ts, scored
// within the date (scoring.ts), and a total. Strictly point in time: the factors read closes up to
// the date and the statements published on or before it (and within 18 months of it). A generator
// of dates, so the caller writes each date's components and keeps only the ratings.
import { formatISO, parseISO, subMonths } from "date-fns";
import { type Company, type PricePanel, RATING_NAMES, type RatingName, type RatingRow } from "../types.ts";
import { FACTORS, type FactorInputs, MODEL_RATINGS } from "./factors.ts";
import { marketValue } from "./fundamental-factors.ts";
import { equalWeightedMarket, HALF_YEAR, marketRegimes, trailingReturn, volatilityAndBeta } from "./price-factors.ts";
import { componentScore, groupedZScores, percentileScores, round4 } from "./scoring.ts";
import { type StatementsByTicker, statementsAt } from "./statements.ts";

/** A statement older than this many months on the date no longer counts (a company that stopped filing). */
export const STALE_MONTHS = 18;
/** Priced days a stock needs before it is rated. */
export const MIN_DAYS = 21;
/** The rating of a stock with no input for it: the middle of the scale. */
export const NEUTRAL = 5;

/** One stock's components on one date: each factor's raw value and 0..10 score (NaN: no input). */
export interface ComponentRow {
  ticker: string;
  /** The statement the statement factors came from (null: none counted). */
  fiscalYear: number | null;
  publishDate: string | null;
  raw: Float64Array;
  score: Float64Array;
  /** How many of the factors had an input. */
  factors: number;
}

export interface ModelDate {
  date: string;
  ratings: RatingRow[];
  components: ComponentRow[];
}

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
  const raw = FACTORS.map(() => new Array<number>(live.length));
  const used = live.map((i, k) => {
    const close = panel.close[i];
    const at = statementsAt(ctx.statements.get(ctx.upper[i]), date, since);
    let risk: { volatility: number; beta: number } | null = null;
    const x: FactorInputs = {
      close,
      d,
      market: ctx.market,
      regime: ctx.regime,
      statements: at,
      marketValue: at ? marketValue(close[d], at.current) : NaN,
      sectorStrength: strength[k],
      risk: () => {
        risk ??= volatilityAndBeta(close, ctx.market, d);
        return risk;
      },
    };
    FACTORS.forEach((f, j) => {
      raw[j][k] = f.raw(x);
    });
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

function rateDate(panel: PricePanel, d: number, live: number[], ctx: DateContext): ModelDate {
  const date = panel.dates[d];
  const { raw, used } = rawFactors(panel, d, live, ctx);
  const sector = live.map((i) => ctx.sectorOf.get(ctx.upper[i]) ?? null);
  const z = FACTORS.map((f, j) => groupedZScores(raw[j], (k) => (f.bySector ? sector[k] : null), f.direction));
  const ratings = new Map<RatingName, number[]>();
  for (const r of MODEL_RATINGS) {
    const composite = live.map((_, k) => {
      let sum = 0;
      let n = 0;
      FACTORS.forEach((f, j) => {
        if (f.rating === r && Number.isFinite(z[j][k])) {
          sum += z[j][k];
          n++;
        }
      });
      return n ? sum / n : NaN;
    });
    ratings.set(r, percentileScores(composite));
  }
  const rows: RatingRow[] = [];
  const components: ComponentRow[] = [];
  live.forEach((i, k) => {
    const row = { date, ticker: panel.tickers[i] } as RatingRow;
    let sum = 0;
    let n = 0;
    for (const r of MODEL_RATINGS) {
      const v = ratings.get(r)![k];
      row[r] = round4(Number.isFinite(v) ? v : NEUTRAL);
      if (Number.isFinite(v)) {
        sum += v;
        n++;
      }
    }
    // total: the equal-weighted mean of the ratings the stock has inputs for
    row.total_rating = round4(n ? sum / n : NEUTRAL);
    rows.push(orderedRow(row));
    const s = used[k];
    const c: ComponentRow = {
      ticker: panel.tickers[i],
      fiscalYear: s?.fiscalYear ?? null,
      publishDate: s?.publishDate ?? null,
      raw: Float64Array.from(FACTORS, (_, j) => round6(raw[j][k])),
      score: Float64Array.from(FACTORS, (_, j) => componentScore(z[j][k])),
      factors: 0,
    };
    c.factors = c.raw.filter(Number.isFinite).length;
    components.push(c);
  });
  return { date, ratings: rows, components };
}

/** A rating row with its keys in RATING_NAMES' order (as the vendor reader builds them). */
function orderedRow(r: RatingRow): RatingRow {
  const out = { date: r.date, ticker: r.ticker } as RatingRow;
  for (const n of RATING_NAMES) out[n] = r[n];
  return out;
}
