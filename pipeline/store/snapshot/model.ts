// The published snapshot as the API holds it in memory: everything a read needs, precomputed.
// The store's loader builds it from the snapshot's Parquet tables; tests may build it directly.
import type { RatingEvidence } from "../../ratings/evidence.ts";
import type {
  BenchmarkDef,
  Company,
  HoldingRow,
  LevelSeries,
  MetricRow,
  PortfolioRules,
  RatingComponent,
  RatingRow,
  ReturnSeries,
} from "../../types.ts";

/** A portfolio's backtest result, for predefined and user portfolios alike. */
export interface PortfolioResult {
  rules: PortfolioRules;
  /** null for predefined portfolios; the owner's user id otherwise. */
  ownerId: string | null;
  createdAt: string; // ISO timestamp
  /** Last rebalance on or before the last price date (null when it never rebalanced). */
  previousRebalanceDate: string | null;
  /** Next calendar day of the portfolio, not moved to a trading date. */
  nextRebalanceDate: string | null;
  /** Daily returns from the first rebalance date (0.0 there). */
  returns: ReturnSeries;
  /** Selection of previousRebalanceDate, with that date's ratings and closes. */
  holdings: HoldingRow[];
  /** Selection run on the latest trading date with the latest ratings (rebalance_period=today). */
  todayDate: string | null;
  todayHoldings: HoldingRow[];
  /** Every rebalance ascending by date, with what changed (read from the holdings table; fixtures may omit it). */
  rebalances?: RebalanceChange[];
}

/** One rebalance of a portfolio: how many stocks it held and which entered or left. */
export interface RebalanceChange {
  date: string;
  holdingsCount: number;
  /** Tickers held now and not at the rebalance before (all of them at the first), sorted. */
  added: string[];
  /** Tickers held at the rebalance before and not now, sorted. */
  removed: string[];
  /** Σ|target − value before trading| / value before costs; null in a snapshot from before costs. */
  turnover: number | null;
  /** costBps / 10,000 × turnover: the fraction of the value the trading cost; null as turnover. */
  cost: number | null;
}

export interface BenchmarkResult extends BenchmarkDef {
  /** Value index (index closes, or the rule portfolio's compounded value). */
  levels: LevelSeries;
}

// The financial statements' row types are the financials' own (pipeline/financials/rows.ts): the store reads
// and writes them, the financials never import the store.
import type { CompanyFinancials } from "../../financials/rows.ts";

export type { CompanyFinancials, FinancialRow, FinancialSet, FinancialType } from "../../financials/rows.ts";

export interface Snapshot {
  id: string;
  createdAt: string;
  /** Fingerprint of the source the snapshot was built from. */
  sourceId: string;
  lastPriceDate: string;
  companies: Company[]; // ordered by ticker
  companyByTicker: Map<string, Company>; // upper-case ticker
  companyById: Map<string, Company>;
  /** Distinct rating dates, ascending. */
  ratingDates: string[];
  /** Rating rows per rating date, ordered by ticker. */
  ratingsByDate: Map<string, RatingRow[]>;
  /** Daily returns per ticker (first price date 0.0). */
  stockReturns: Map<string, ReturnSeries>;
  benchmarks: BenchmarkResult[];
  benchmarkById: Map<string, BenchmarkResult>;
  /** Predefined and user portfolios, by id. */
  portfolios: Map<string, PortfolioResult>;
  /**
   * Full-period metric rows, precomputed: key `${kind}:${id}|${benchmarkId ?? ""}`
   * with kind `stock` (id = ticker) or `portfolio`.
   */
  metrics: Map<string, MetricRow[]>;
  financials: Map<string, CompanyFinancials>; // by ticker
  /** What every rating predicted (pipeline/ratings/evidence.ts); absent: none (a fixture without it). */
  ratingEvidence?: RatingEvidence[];
  /** The factor model's components, key `${upper-case ticker}|${date}` (absent: vendor ratings, none). */
  ratingComponents?: Map<string, RatingComponent[]>;
}

export const metricsKey = (kind: "stock" | "portfolio", id: string, benchmarkId?: string | null) =>
  `${kind}:${id}|${benchmarkId ?? ""}`;
