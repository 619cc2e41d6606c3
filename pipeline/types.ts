// Shared record types: the one vocabulary every stage, the store and the API speak.

/** Rating columns in source and API order (snake_case as in query parameters). */
export const RATING_NAMES = [
  "total_rating",
  "return_rating",
  "growth_rating",
  "risk_rating",
  "valuation_rating",
  "technical_rating",
  "macro_rating",
] as const;
export type RatingName = (typeof RATING_NAMES)[number];

/** camelCase form used in JSON resources (`totalRating`) and in portfolio `ranges`. */
export const RATING_CAMEL: Record<RatingName, string> = {
  total_rating: "totalRating",
  return_rating: "returnRating",
  growth_rating: "growthRating",
  risk_rating: "riskRating",
  valuation_rating: "valuationRating",
  technical_rating: "technicalRating",
  macro_rating: "macroRating",
};

export interface Company {
  /** Stable string id (from the source, else assigned once and kept). */
  id: string;
  ticker: string;
  name: string;
  sector: string;
  sectorId: number;
  industry: string;
  industryId: number;
  sharesOutstanding: number | null;
  /** Integer USD; null when unknown. */
  marketCap: number | null;
}

export interface PriceRow {
  date: string; // YYYY-MM-DD
  ticker: string;
  open: number | null;
  high: number | null;
  low: number | null;
  close: number;
  adjClose: number | null;
  volume: number | null;
}

export type RatingValues = Record<RatingName, number>;
/** One factor of a computed rating on one date (pipeline/ratings/components.ts); null: no input. */
export interface RatingComponent {
  rating: string;
  factor: string;
  raw: number | null;
  score: number | null;
  /** The statement a statement factor came from. */
  fiscalYear: number | null;
  publishDate: string | null;
}

export interface RatingRow extends RatingValues {
  date: string;
  ticker: string;
}

/** A daily return series: ascending ISO dates and the simple return on each date. */
export interface ReturnSeries {
  dates: string[];
  returns: Float64Array;
}

/** A level series (index closes, or a portfolio's value index): ascending dates. */
export interface LevelSeries {
  dates: string[];
  levels: Float64Array;
}

/**
 * Closing prices of every ticker on one shared trading calendar (a date with any price).
 * close[i][d] is NaN where ticker i has no price on dates[d].
 * Returns use adj_close when the source gives it, so `close` here is the price used for
 * returns and trades alike (adj_close when present, else close).
 */
export interface PricePanel {
  dates: string[];
  tickers: string[];
  close: Float64Array[];
}

export type SortOrder = "descending" | "ascending";

/** Rule fields of a portfolio (predefined, user-owned or a rule-based benchmark). */
export interface PortfolioRules {
  id: string;
  name: string;
  description: string;
  /** Months between rebalances. */
  rebalanceFrequency: number;
  maxStocks: number;
  maxStocksCriteria: RatingName | "market_cap";
  maxStocksCriteriaOrder: SortOrder;
  /** Decimal fraction (0..1]; null = no sector cap. */
  maxSectorConcentration: number | null;
  /** Constrained ratings only; bounds inclusive. */
  ranges: Partial<Record<RatingName, [number, number]>>;
  /** Trading cost in basis points of the traded value (0..500); absent means 0 (docs/portfolios.md). */
  costBps?: number;
}

/** One stock held at a rebalance, with the ratings as of that date and the close used. */
export interface HoldingRow extends RatingValues {
  date: string;
  ticker: string;
  price: number;
}

/** A benchmark as listed by the API: an index series or a rule-based portfolio. */
export interface BenchmarkDef {
  id: string; // integer-valued string
  name: string;
  description: string;
  rebalanceFrequency: number;
  /** Name of an index series in the `benchmarks` source table, or… */
  series?: string;
  /** …portfolio rules (equal weight of a selection, rebalanced). */
  rules?: Omit<PortfolioRules, "id" | "name" | "description">;
}

/** One metric row: `{metric, <column>: value, [<benchmark name>: value]}`. */
export type MetricRow = { metric: string } & Record<string, string>;
