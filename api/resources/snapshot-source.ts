// The accessor interface every snapshot implementation answers (see snapshot-access.ts): the
// in-memory Snapshot (tests' fixtures, memory-source.ts) and the lazy DuckDB-backed reader the
// server holds (reader-source.ts). One conformance suite runs against both.

import type { RatingComponent } from "../../pipeline/ratings/components.ts";
import type { RatingEvidence } from "../../pipeline/ratings/evidence.ts";
import type { BenchmarkResult, CompanyFinancials, PortfolioResult } from "../../pipeline/store/snapshot/model.ts";
import type { Company, MetricRow, RatingRow, ReturnSeries } from "../../pipeline/types.ts";
import type { OrderBy, Page, PageArgs, Ranges } from "./ordering.ts";

export interface RatedStock {
  company: Company;
  ratings: RatingRow;
}

export interface RatedStockQuery extends PageArgs {
  date: string;
  orderBy: OrderBy;
  /** upper-case needle matched against ticker and name */
  search?: string;
  ranges?: Ranges;
}

export interface SnapshotSource {
  readonly id: string;
  /** When the snapshot was published (ISO timestamp). */
  readonly createdAt: string;
  ratingDateOnOrBefore(date?: string): Promise<string | null>;
  ratedStocks(q: RatedStockQuery): Promise<Page<RatedStock>>;
  companies(): Promise<readonly Company[]>;
  companiesByTicker(tickers: readonly string[]): Promise<(Company | undefined)[]>;
  companiesById(ids: readonly string[]): Promise<(Company | undefined)[]>;
  ratingsAsOf(tickers: readonly string[], date?: string): Promise<(RatingRow | undefined)[]>;
  ratingHistory(ticker: string, p: PageArgs & { descending?: boolean }): Promise<Page<RatingRow>>;
  /** A ticker's rating components on a rating date ([]: none, as for vendor ratings). */
  ratingComponents(ticker: string, date: string): Promise<RatingComponent[]>;
  stockReturns(ticker: string): Promise<ReturnSeries>;
  financialsOf(tickers: readonly string[]): Promise<(CompanyFinancials | undefined)[]>;
  storedMetrics(
    kind: "stock" | "portfolio",
    ids: readonly string[],
    benchmarkId: string | null,
  ): Promise<(MetricRow[] | undefined)[]>;
  portfolioResults(ids: readonly string[]): Promise<(PortfolioResult | undefined)[]>;
  predefinedPortfolios(): Promise<PortfolioResult[]>;
  benchmarks(): Promise<readonly BenchmarkResult[]>;
  benchmarkById(id: string): Promise<BenchmarkResult | undefined>;
  /** Every rating's evidence at every horizon (the baseline's too), in the stored order. */
  ratingEvidence(): Promise<readonly RatingEvidence[]>;
}

export const EMPTY_RETURNS: ReturnSeries = { dates: [], returns: new Float64Array() };
