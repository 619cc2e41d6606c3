// The accessor interface over the lazy SnapshotReader (DuckDB over the published Parquet): what
// the server holds. Small things live on the reader (companies, rating dates, benchmarks, each
// ticker's latest rating); every per-ticker or per-date slice is a query, with bounded caches.
// The rated-stocks list of a date is filtered, ordered and paged in SQL.

import { LRUCache } from "lru-cache";
import type { RatedOrderKey } from "../../pipeline/store/read/rating-queries.ts";
import type { SnapshotReader } from "../../pipeline/store/read/snapshot-reader.ts";
import type { Page, PageArgs } from "./ordering.ts";
import { lastAtOrBefore } from "./snapshot-index.ts";
import { EMPTY_RETURNS, type RatedStock, type RatedStockQuery, type SnapshotSource } from "./snapshot-source.ts";

export class ReaderSource implements SnapshotSource {
  /** Hot pages of rated-stock lists (the REST body cache sits above this; GraphQL pages reuse it). */
  private readonly pages = new LRUCache<string, Promise<RatedStock[]>>({ max: 256 });
  private readonly counts = new LRUCache<string, Promise<number>>({ max: 256 });
  private predefined: Promise<NonNullable<Awaited<ReturnType<SnapshotReader["portfolio"]>>>[]> | null = null;

  constructor(readonly reader: SnapshotReader) {}
  get id() {
    return this.reader.id;
  }
  get createdAt() {
    return this.reader.meta.createdAt;
  }

  async ratingDateOnOrBefore(date?: string) {
    const d = this.reader.ratingDates;
    const i = date === undefined ? d.length - 1 : lastAtOrBefore(d, date);
    return i < 0 ? null : d[i];
  }

  async ratedStocks(q: RatedStockQuery): Promise<Page<RatedStock>> {
    const descending = q.orderBy.startsWith("-");
    const rq = {
      date: q.date,
      key: (descending ? q.orderBy.slice(1) : q.orderBy) as RatedOrderKey,
      descending,
      search: q.search || undefined,
      ranges: q.ranges,
    };
    const base = JSON.stringify([rq.date, rq.key, rq.descending, rq.search ?? null, rq.ranges ?? null]);
    const key = `${base}|${q.offset}|${q.limit}`;
    let page = this.pages.get(key);
    if (!page) {
      page = this.reader.ratedPage(rq, q.offset, q.limit).then(({ rows, companyTickers }) =>
        rows.flatMap((ratings, i) => {
          const company = this.reader.companyByTicker.get(companyTickers[i]);
          return company ? [{ company, ratings }] : [];
        }),
      );
      page.catch(() => this.pages.delete(key));
      this.pages.set(key, page);
    }
    const totalCount = () => {
      let n = this.counts.get(base);
      if (!n) {
        n = this.reader.ratedCount(rq);
        n.catch(() => this.counts.delete(base));
        this.counts.set(base, n);
      }
      return n;
    };
    return { items: await page, totalCount };
  }

  async companies() {
    return this.reader.companies;
  }
  async companiesByTicker(tickers: readonly string[]) {
    return tickers.map((t) => this.reader.companyByTicker.get(t.toUpperCase()));
  }
  async companiesById(ids: readonly string[]) {
    return ids.map((id) => this.reader.companyById.get(id));
  }
  async ratingsAsOf(tickers: readonly string[], date?: string) {
    return this.reader.ratingsAsOf(
      tickers.map((t) => t.toUpperCase()),
      date,
    );
  }
  async ratingHistory(ticker: string, p: PageArgs & { descending?: boolean }) {
    const h = await this.reader.ratingHistory(ticker.toUpperCase());
    const list = p.descending ? [...h].reverse() : h;
    return { items: list.slice(p.offset, p.offset + p.limit), totalCount: async () => h.length };
  }
  async ratingComponents(ticker: string, date: string) {
    return this.reader.ratingComponents(ticker.toUpperCase(), date);
  }
  async stockReturns(ticker: string) {
    const up = ticker.toUpperCase();
    return (
      (await this.reader.stockReturns(up)) ??
      (up === ticker ? undefined : await this.reader.stockReturns(ticker)) ??
      EMPTY_RETURNS
    );
  }
  async financialsOf(tickers: readonly string[]) {
    return Promise.all(tickers.map((t) => this.reader.companyFinancials(t)));
  }
  async storedMetrics(kind: "stock" | "portfolio", ids: readonly string[], benchmarkId: string | null) {
    return Promise.all(ids.map((id) => this.reader.metricRows(kind, id, benchmarkId)));
  }
  async portfolioResults(ids: readonly string[]) {
    return Promise.all(ids.map((id) => this.reader.portfolio(id)));
  }
  async predefinedPortfolios() {
    this.predefined ??= Promise.all(this.reader.predefinedIds.map((id) => this.reader.portfolio(id))).then(
      (ps) => ps.filter((p) => p !== undefined && p.ownerId === null) as never,
    );
    this.predefined.catch(() => (this.predefined = null));
    return [...(await this.predefined)];
  }
  async benchmarks() {
    return this.reader.benchmarks;
  }
  async benchmarkById(id: string) {
    return this.reader.benchmarks.find((b) => b.id === id);
  }
  ratingEvidence() {
    return this.reader.ratingEvidence();
  }
}
