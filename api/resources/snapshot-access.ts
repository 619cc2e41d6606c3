// The only way the resource readers reach snapshot data: small async accessor functions over the
// published snapshot. A request's SnapshotRef is either the lazy, store-backed reader the server
// holds (reader-source.ts) or an in-memory Snapshot as tests build it (memory-source.ts); both
// answer the SnapshotSource interface. Lists come with filter, order and page pushed down.
import type { Snapshot } from "../../pipeline/store/snapshot/model.ts";
import { MemorySource } from "./memory-source.ts";
import type { Page, PageArgs } from "./ordering.ts";
import type { RatedStock, RatedStockQuery, SnapshotSource } from "./snapshot-source.ts";

export type { RatedStock, RatedStockQuery, SnapshotSource };
/** The published snapshot a request reads (read once per request; a swap never mixes two). */
export type SnapshotRef = SnapshotSource | Snapshot;

const memory = new WeakMap<Snapshot, MemorySource>();
/** The accessor interface of a snapshot reference (an in-memory Snapshot gets one wrapper, kept with it). */
export function sourceOf(s: SnapshotRef): SnapshotSource {
  if (!("ratingsByDate" in s)) return s;
  let m = memory.get(s);
  if (!m) {
    m = new MemorySource(s);
    memory.set(s, m);
  }
  return m;
}

/** Identity of the snapshot, for cache keys and ETags. */
export const snapshotId = (s: SnapshotRef): string => s.id;
/** When the snapshot was published (ISO timestamp). */
export const snapshotCreatedAt = (s: SnapshotRef): string => s.createdAt;

export const ratingDateOnOrBefore = (s: SnapshotRef, date?: string) => sourceOf(s).ratingDateOnOrBefore(date);
/** One page of the rated stocks of a rating date, filtered and ordered. */
export const ratedStocks = (s: SnapshotRef, q: RatedStockQuery): Promise<Page<RatedStock>> =>
  sourceOf(s).ratedStocks(q);
export const companies = (s: SnapshotRef) => sourceOf(s).companies();
export const companiesByTicker = (s: SnapshotRef, tickers: readonly string[]) => sourceOf(s).companiesByTicker(tickers);
export const companiesById = (s: SnapshotRef, ids: readonly string[]) => sourceOf(s).companiesById(ids);
/** Each ticker's latest rating on or before `date` (latest overall when omitted). */
export const ratingsAsOf = (s: SnapshotRef, tickers: readonly string[], date?: string) =>
  sourceOf(s).ratingsAsOf(tickers, date);
/** A ticker's rating rows ascending by date, one page. */
export const ratingHistory = (s: SnapshotRef, ticker: string, p: PageArgs & { descending?: boolean }) =>
  sourceOf(s).ratingHistory(ticker, p);
/** A ticker's rating components on a rating date ([]: none, as for vendor ratings). */
export const ratingComponents = (s: SnapshotRef, ticker: string, date: string) =>
  sourceOf(s).ratingComponents(ticker, date);
export const stockReturns = (s: SnapshotRef, ticker: string) => sourceOf(s).stockReturns(ticker);
export const financialsOf = (s: SnapshotRef, tickers: readonly string[]) => sourceOf(s).financialsOf(tickers);
/** Stored full-period metric rows of stocks (id = ticker) or portfolios. */
export const storedMetrics = (
  s: SnapshotRef,
  kind: "stock" | "portfolio",
  ids: readonly string[],
  benchmarkId: string | null,
) => sourceOf(s).storedMetrics(kind, ids, benchmarkId);
export const portfolioResults = (s: SnapshotRef, ids: readonly string[]) => sourceOf(s).portfolioResults(ids);
export const predefinedPortfolios = (s: SnapshotRef) => sourceOf(s).predefinedPortfolios();
export const benchmarks = (s: SnapshotRef) => sourceOf(s).benchmarks();
export const benchmarkById = (s: SnapshotRef, id: string) => sourceOf(s).benchmarkById(id);
/** The rating evidence rows (pipeline/ratings/evidence.ts). */
export const ratingEvidence = (s: SnapshotRef) => sourceOf(s).ratingEvidence();
