// The factor model's definition in one table: every factor, the rating it feeds, which way is
// better, whether it is scored within the stock's sector (the convention for accounting ratios,
// whose levels differ by industry) or across the whole date, and how its raw value is computed.
// docs/ratings.md explains each with its reference; nothing here was fitted to any data.
import type { RatingName } from "../types.ts";
import * as F from "./fundamental-factors.ts";
import { momentum12m1, trend200 } from "./price-factors.ts";

/** What a factor of one stock on one rating date is computed from. */
export interface FactorInputs {
  close: Float64Array;
  /** The rating date's index into the panel. */
  d: number;
  /** The market's daily returns (price-factors.ts equalWeightedMarket). */
  market: Float64Array;
  /** The market's regime on d: +1 up-trend, −1 down-trend, 0 unknown. */
  regime: number;
  /** The statements that count on the date, or null. */
  statements: F.StatementsAt | null;
  /** close(d) times the latest published statement's shares (NaN without one). */
  marketValue: number;
  /** The stock's sector's mean 6-month return less the date's cross-sectional mean (NaN: no sector). */
  sectorStrength: number;
  /** volatilityAndBeta of this stock on d. */
  volatility: number;
  beta: number;
}

export interface FactorDef {
  name: string;
  rating: Exclude<RatingName, "total_rating">;
  /** +1: higher raw values are better; −1: lower are. */
  direction: 1 | -1;
  bySector: boolean;
  /** Read off the statements (else off the prices): its component names the statement. */
  statement: boolean;
  raw(x: FactorInputs): number;
}

const stmt = (f: (s: F.StatementsAt, mv: number) => number) => (x: FactorInputs) =>
  x.statements ? f(x.statements, x.marketValue) : NaN;

export const FACTORS: readonly FactorDef[] = [
  // valuation: Fama-French value and its cash-flow cousins, per dollar of market (or enterprise) value
  {
    name: "earnings_yield",
    rating: "valuation_rating",
    direction: 1,
    bySector: true,
    statement: true,
    raw: stmt((s, mv) => F.earningsYield(s.current, mv)),
  },
  {
    name: "book_to_market",
    rating: "valuation_rating",
    direction: 1,
    bySector: true,
    statement: true,
    raw: stmt((s, mv) => F.bookToMarket(s.current, mv)),
  },
  {
    name: "fcf_yield",
    rating: "valuation_rating",
    direction: 1,
    bySector: true,
    statement: true,
    raw: stmt((s, mv) => F.freeCashFlowYield(s.current, mv)),
  },
  {
    name: "ebitda_to_ev",
    rating: "valuation_rating",
    direction: 1,
    bySector: true,
    statement: true,
    raw: stmt((s, mv) => F.ebitdaToEv(s.current, mv)),
  },
  // growth: one year and three
  {
    name: "revenue_growth_1y",
    rating: "growth_rating",
    direction: 1,
    bySector: true,
    statement: true,
    raw: stmt((s) => F.revenueGrowth(s.current, s.prior, 1)),
  },
  {
    name: "revenue_growth_3y",
    rating: "growth_rating",
    direction: 1,
    bySector: true,
    statement: true,
    raw: stmt((s) => F.revenueGrowth(s.current, s.prior3, 3)),
  },
  {
    name: "earnings_growth_1y",
    rating: "growth_rating",
    direction: 1,
    bySector: true,
    statement: true,
    raw: stmt((s) => F.earningsGrowth(s.current, s.prior, 1)),
  },
  {
    name: "earnings_growth_3y",
    rating: "growth_rating",
    direction: 1,
    bySector: true,
    statement: true,
    raw: stmt((s) => F.earningsGrowth(s.current, s.prior3, 3)),
  },
  {
    name: "fcf_growth_1y",
    rating: "growth_rating",
    direction: 1,
    bySector: true,
    statement: true,
    raw: stmt((s) => F.freeCashFlowGrowth(s.current, s.prior, 1)),
  },
  {
    name: "fcf_growth_3y",
    rating: "growth_rating",
    direction: 1,
    bySector: true,
    statement: true,
    raw: stmt((s) => F.freeCashFlowGrowth(s.current, s.prior3, 3)),
  },
  // returns on capital
  {
    name: "roe",
    rating: "return_rating",
    direction: 1,
    bySector: true,
    statement: true,
    raw: stmt((s) => F.returnOnEquity(s.current)),
  },
  {
    name: "roic",
    rating: "return_rating",
    direction: 1,
    bySector: true,
    statement: true,
    raw: stmt((s) => F.returnOnInvestedCapital(s.current)),
  },
  {
    name: "gross_profitability",
    rating: "return_rating",
    direction: 1,
    bySector: true,
    statement: true,
    raw: stmt((s) => F.grossProfitability(s.current)),
  },
  {
    name: "f_score",
    rating: "return_rating",
    direction: 1,
    bySector: false,
    statement: true,
    raw: stmt((s) => F.fScore(s.current, s.prior)),
  },
  // risk: higher rating is safer
  {
    name: "volatility",
    rating: "risk_rating",
    direction: -1,
    bySector: false,
    statement: false,
    raw: (x) => x.volatility,
  },
  { name: "beta", rating: "risk_rating", direction: -1, bySector: false, statement: false, raw: (x) => x.beta },
  {
    name: "leverage",
    rating: "risk_rating",
    direction: -1,
    bySector: true,
    statement: true,
    raw: stmt((s) => F.leverage(s.current)),
  },
  // technical
  {
    name: "momentum_12_1",
    rating: "technical_rating",
    direction: 1,
    bySector: false,
    statement: false,
    raw: (x) => momentum12m1(x.close, x.d),
  },
  {
    name: "trend_200",
    rating: "technical_rating",
    direction: 1,
    bySector: false,
    statement: false,
    raw: (x) => trend200(x.close, x.d),
  },
  // macro: the sector's relative strength, and beta signed by the market's trend (high beta rated
  // well in an up-trend, low beta in a down-trend)
  {
    name: "sector_strength",
    rating: "macro_rating",
    direction: 1,
    bySector: false,
    statement: false,
    raw: (x) => x.sectorStrength,
  },
  {
    name: "regime_beta",
    rating: "macro_rating",
    direction: 1,
    bySector: false,
    statement: false,
    raw: (x) => (x.regime === 0 ? NaN : x.regime * x.beta),
  },
];

/** The ratings the factors feed, in the order the factors list them. */
export const MODEL_RATINGS = [...new Set(FACTORS.map((f) => f.rating))];
