// The only way the resource readers reach snapshot data: small async accessor functions over the
// published snapshot. Today they read the in-memory Snapshot (and its lazy indexes); a lazy,
// store-backed reader replaces this one module and nothing else. Lists come with filter, order
// and page pushed down so that reader can answer them with one query each.
import type { BenchmarkResult, CompanyFinancials, PortfolioResult, Snapshot } from "../../pipeline/store/model.ts";
import { metricsKey } from "../../pipeline/store/model.ts";
import type { Company, MetricRow, RatingRow, ReturnSeries } from "../../pipeline/types.ts";
import { inRanges, type OrderBy, type Page, type PageArgs, type Ranges } from "./ordering.ts";
import { haystackOf, indexOf, type RatedStock } from "./snapshot-index.ts";

export type { RatedStock };
/** The published snapshot a request reads (read once per request; a swap never mixes two). */
export type SnapshotRef = Snapshot;

const EMPTY_RETURNS: ReturnSeries = { dates: [], returns: new Float64Array() };

/** Identity of the snapshot, for cache keys and ETags. */
export const snapshotId = (s: SnapshotRef): string => s.id;
/** When the snapshot was published (ISO timestamp). */
export const snapshotCreatedAt = (s: SnapshotRef): string => s.createdAt;

export async function ratingDateOnOrBefore(s: SnapshotRef, date?: string): Promise<string | null> {
  return indexOf(s).ratingDateOnOrBefore(date);
}

export interface RatedStockQuery extends PageArgs {
  date: string;
  orderBy: OrderBy;
  /** upper-case needle matched against ticker and name */
  search?: string;
  ranges?: Ranges;
}

/** One page of the rated stocks of a rating date, filtered and ordered. */
export async function ratedStocks(s: SnapshotRef, q: RatedStockQuery): Promise<Page<RatedStock>> {
  const all = indexOf(s).sorted(q.date, q.orderBy);
  const ranges = q.ranges && Object.keys(q.ranges).length ? q.ranges : undefined;
  if (!q.search && !ranges) return { items: all.slice(q.offset, q.offset + q.limit), totalCount: async () => all.length };
  const keep = (e: RatedStock) => (!q.search || haystackOf(e.company).includes(q.search)) && (!ranges || inRanges(e.ratings, ranges));
  // filtering is lazy: stop once the page is full; the total is counted only when asked
  const items: RatedStock[] = [];
  const want = q.offset + q.limit;
  let seen = 0;
  for (const e of all) {
    if (!keep(e)) continue;
    if (seen++ >= q.offset) items.push(e);
    if (seen >= want) break;
  }
  return { items, totalCount: async () => all.reduce((n, e) => n + (keep(e) ? 1 : 0), 0) };
}

export async function companies(s: SnapshotRef): Promise<readonly Company[]> {
  return s.companies;
}
export async function companiesByTicker(s: SnapshotRef, tickers: readonly string[]): Promise<(Company | undefined)[]> {
  return tickers.map((t) => s.companyByTicker.get(t.toUpperCase()));
}
export async function companiesById(s: SnapshotRef, ids: readonly string[]): Promise<(Company | undefined)[]> {
  return ids.map((id) => s.companyById.get(id));
}

/** Each ticker's latest rating on or before `date` (latest overall when omitted). */
export async function ratingsAsOf(s: SnapshotRef, tickers: readonly string[], date?: string): Promise<(RatingRow | undefined)[]> {
  const idx = indexOf(s);
  return tickers.map((t) => idx.ratingAsOf(t.toUpperCase(), date));
}
/** A ticker's rating rows ascending by date, one page. */
export async function ratingHistory(s: SnapshotRef, ticker: string, p: PageArgs & { descending?: boolean }): Promise<Page<RatingRow>> {
  const h = indexOf(s).historyOf(ticker.toUpperCase());
  const list = p.descending ? [...h].reverse() : h;
  return { items: list.slice(p.offset, p.offset + p.limit), totalCount: async () => h.length };
}

export async function stockReturns(s: SnapshotRef, ticker: string): Promise<ReturnSeries> {
  return s.stockReturns.get(ticker.toUpperCase()) ?? s.stockReturns.get(ticker) ?? EMPTY_RETURNS;
}
export async function financialsOf(s: SnapshotRef, tickers: readonly string[]): Promise<(CompanyFinancials | undefined)[]> {
  return tickers.map((t) => s.financials.get(t));
}
/** Stored full-period metric rows of stocks (id = ticker) or portfolios. */
export async function storedMetrics(s: SnapshotRef, kind: "stock" | "portfolio", ids: readonly string[], benchmarkId: string | null): Promise<(MetricRow[] | undefined)[]> {
  return ids.map((id) => s.metrics.get(metricsKey(kind, id, benchmarkId)));
}

export async function portfolioResults(s: SnapshotRef, ids: readonly string[]): Promise<(PortfolioResult | undefined)[]> {
  return ids.map((id) => s.portfolios.get(id));
}
export async function predefinedPortfolios(s: SnapshotRef): Promise<PortfolioResult[]> {
  return [...s.portfolios.values()].filter((p) => p.ownerId === null);
}

export async function benchmarks(s: SnapshotRef): Promise<readonly BenchmarkResult[]> {
  return s.benchmarks;
}
export async function benchmarkById(s: SnapshotRef, id: string): Promise<BenchmarkResult | undefined> {
  return s.benchmarkById.get(id);
}
