// Stocks: the rated list of a rating date, one stock's rating as of a date, its rating history,
// its identity and its financial statements.
import { financialsResponse } from "../../pipeline/financials/index.ts";
import type { CompanyFinancials, FinancialType } from "../../pipeline/store/snapshot/model.ts";
import type { Company, RatingRow } from "../../pipeline/types.ts";
import { NotFound } from "../errors.ts";
import { comparator, matchesSearch, type OrderBy, type Page, type PageArgs, pageOf, type Ranges } from "./ordering.ts";
import { type RatedStockItem, ratedStockItemOf } from "./shapes.ts";
import type { SnapshotRef } from "./snapshot-access.ts";
import * as access from "./snapshot-access.ts";

/** The rating date a list "as of `date`" reads: the latest on or before it; 404 before the first. */
export async function ratingListDate(s: SnapshotRef, date?: string): Promise<string> {
  const d = await access.ratingDateOnOrBefore(s, date);
  if (d === null) throw new NotFound(date ? `no ratings on or before ${date}` : "no ratings have been published");
  return d;
}

export interface StockRatingsQuery extends PageArgs {
  /** a rating date (see ratingListDate) */
  date: string;
  orderBy: OrderBy;
  search?: string;
  ranges?: Ranges;
}

/** One page of stock rating items of a rating date. */
export async function stockRatingsPage(s: SnapshotRef, q: StockRatingsQuery): Promise<Page<RatedStockItem>> {
  const page = await access.ratedStocks(s, { ...q, search: q.search ? q.search.toUpperCase() : undefined });
  return { items: page.items.map((e) => ratedStockItemOf(q.date, e.company, e.ratings)), totalCount: page.totalCount };
}

/** A known stock by ticker (case-insensitive); 404 otherwise. */
export async function stockByTicker(s: SnapshotRef, ticker: string): Promise<Company> {
  const [c] = await access.companiesByTicker(s, [ticker]);
  if (!c) throw new NotFound(`unknown ticker ${ticker.toUpperCase()}`);
  return c;
}

/** The tickers of `tickers` (upper case) the snapshot has no stock of, in the order given. */
export async function unknownTickers(s: SnapshotRef, tickers: readonly string[]): Promise<string[]> {
  const known = new Set((await access.companiesByTicker(s, [...tickers])).map((c) => c?.ticker));
  return tickers.filter((t) => !known.has(t));
}

/** One stock's rating item: its latest rating on or before `date`; 404 when none. */
export async function stockRating(s: SnapshotRef, ticker: string, date?: string): Promise<RatedStockItem> {
  const c = await stockByTicker(s, ticker);
  const [row] = await access.ratingsAsOf(s, [c.ticker], date);
  if (!row) throw new NotFound(date ? `no ratings of ${c.ticker} on or before ${date}` : `no ratings of ${c.ticker}`);
  return ratedStockItemOf(row.date, c, row);
}

/** A stock's rating rows, ascending by date (descending when asked), one page. */
export async function ratingHistoryPage(
  s: SnapshotRef,
  c: Company,
  p: PageArgs & { descending?: boolean },
): Promise<Page<RatedStockItem>> {
  const page = await access.ratingHistory(s, c.ticker, p);
  return { items: page.items.map((r: RatingRow) => ratedStockItemOf(r.date, c, r)), totalCount: page.totalCount };
}

/**
 * The financials response object (arrays named by type; empty arrays for a stock without
 * statements). `load` lets a caller batch the statement reads of many stocks.
 */
export async function stockFinancials(
  s: SnapshotRef,
  c: Company,
  type: FinancialType,
  load: (ticker: string) => Promise<CompanyFinancials | undefined> = async (t) =>
    (await access.financialsOf(s, [t]))[0],
): Promise<Record<string, unknown>> {
  return financialsResponse({ id: c.id, ticker: c.ticker, name: c.name }, await load(c.ticker), type);
}

/** Every stock of the snapshot, searched and ordered (by its latest rating for rating keys), one page. */
export async function stocksPage(
  s: SnapshotRef,
  q: PageArgs & { search?: string; orderBy: OrderBy },
): Promise<Page<Company>> {
  const needle = q.search?.toUpperCase();
  const all = (await access.companies(s)).filter((c) => !needle || matchesSearch(c, needle));
  const latest = await access.ratingsAsOf(
    s,
    all.map((c) => c.ticker),
  );
  const sorted = all.map((company, i) => ({ company, ratings: latest[i] ?? null })).sort(comparator(q.orderBy));
  return pageOf(
    sorted.map((e) => e.company),
    q,
  );
}
