// The accessor interface over an in-memory Snapshot (and its lazy indexes): what test fixtures
// build directly. The server holds the lazy reader instead (reader-source.ts).
import type { Snapshot } from "../../pipeline/store/snapshot/model.ts";
import { metricsKey } from "../../pipeline/store/snapshot/model.ts";
import { inRanges, type Page, type PageArgs } from "./ordering.ts";
import { haystackOf, indexOf } from "./snapshot-index.ts";
import { EMPTY_RETURNS, type RatedStock, type RatedStockQuery, type SnapshotSource } from "./snapshot-source.ts";

export class MemorySource implements SnapshotSource {
  constructor(private readonly s: Snapshot) {}
  get id() {
    return this.s.id;
  }
  get createdAt() {
    return this.s.createdAt;
  }

  async ratingDateOnOrBefore(date?: string) {
    return indexOf(this.s).ratingDateOnOrBefore(date);
  }

  async ratedStocks(q: RatedStockQuery): Promise<Page<RatedStock>> {
    const all = indexOf(this.s).sorted(q.date, q.orderBy);
    const ranges = q.ranges && Object.keys(q.ranges).length ? q.ranges : undefined;
    if (!q.search && !ranges)
      return { items: all.slice(q.offset, q.offset + q.limit), totalCount: async () => all.length };
    const keep = (e: RatedStock) =>
      (!q.search || haystackOf(e.company).includes(q.search)) && (!ranges || inRanges(e.ratings, ranges));
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

  async companies() {
    return this.s.companies;
  }
  async companiesByTicker(tickers: readonly string[]) {
    return tickers.map((t) => this.s.companyByTicker.get(t.toUpperCase()));
  }
  async companiesById(ids: readonly string[]) {
    return ids.map((id) => this.s.companyById.get(id));
  }
  async ratingsAsOf(tickers: readonly string[], date?: string) {
    const idx = indexOf(this.s);
    return tickers.map((t) => idx.ratingAsOf(t.toUpperCase(), date));
  }
  async ratingHistory(ticker: string, p: PageArgs & { descending?: boolean }) {
    const h = indexOf(this.s).historyOf(ticker.toUpperCase());
    const list = p.descending ? [...h].reverse() : h;
    return { items: list.slice(p.offset, p.offset + p.limit), totalCount: async () => h.length };
  }
  async ratingComponents(ticker: string, date: string) {
    return this.s.ratingComponents?.get(`${ticker.toUpperCase()}|${date}`) ?? [];
  }
  async stockReturns(ticker: string) {
    return this.s.stockReturns.get(ticker.toUpperCase()) ?? this.s.stockReturns.get(ticker) ?? EMPTY_RETURNS;
  }
  async financialsOf(tickers: readonly string[]) {
    return tickers.map((t) => this.s.financials.get(t));
  }
  async storedMetrics(kind: "stock" | "portfolio", ids: readonly string[], benchmarkId: string | null) {
    return ids.map((id) => this.s.metrics.get(metricsKey(kind, id, benchmarkId)));
  }
  async portfolioResults(ids: readonly string[]) {
    return ids.map((id) => this.s.portfolios.get(id));
  }
  async predefinedPortfolios() {
    return [...this.s.portfolios.values()].filter((p) => p.ownerId === null);
  }
  async benchmarks() {
    return this.s.benchmarks;
  }
  async benchmarkById(id: string) {
    return this.s.benchmarkById.get(id);
  }
  async ratingEvidence() {
    return this.s.ratingEvidence ?? [];
  }
}
