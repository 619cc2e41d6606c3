// A published snapshot read lazily: DuckDB over its Parquet files answers each request's slice
// (one ticker's returns, one subject's metric rows, one date's ratings …), with bounded caches.
// Opening reads only the small tables, so a new snapshot is ready in about the time of a few
// queries and memory does not grow with stocks × days. Same values as the in-memory loader.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { loadCompanies, loadRatings } from "../stages/frames.ts";
import type { Company, MetricRow, RatingRow, ReturnSeries } from "../types.ts";
import { columns, lit, openDuck, type Conn } from "./duck.ts";
import { financialTable, readFinancialTables } from "./financial-tables.ts";
import { asReturns, loadSnapshotBenchmarks, readPortfolios, tableOf } from "./load-snapshot.ts";
import { readMetricRows } from "./metric-tables.ts";
import type { BenchmarkResult, CompanyFinancials, FinancialSet, FinancialType, PortfolioResult } from "./model.ts";
import { metricsKey } from "./model.ts";
import { seriesOf } from "./series-read.ts";
import { readMeta, snapshotDir, type SnapshotMeta } from "./snapshots.ts";

/** A Map that forgets its least recently used entry beyond `max`. */
export class LruCache<K, V> {
  private readonly map = new Map<K, V>();
  constructor(readonly max: number) {}
  get(k: K): V | undefined {
    const v = this.map.get(k);
    if (v !== undefined) {
      this.map.delete(k);
      this.map.set(k, v);
    }
    return v;
  }
  set(k: K, v: V): void {
    this.map.delete(k);
    this.map.set(k, v);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value as K);
  }
  get size(): number {
    return this.map.size;
  }
}

/** Tables stored in ticker-range parts, with their key column. */
const PARTITIONED: [string, string][] = [["stock_metrics", "subject"], ...(["income", "balance", "cashflow", "derived"] as const).map((s): [string, string] => [financialTable(s), "ticker"])];

/** Each part file's [min, max] of `key`, read from the Parquet row-group statistics. */
async function partRanges(c: Conn, dir: string, key: string): Promise<{ file: string; min: string; max: string }[]> {
  const [files = [], mins = [], maxs = []] = (await columns(
    c,
    `select file_name, min(stats_min_value), max(stats_max_value) from parquet_metadata(${lit(join(dir, "*.parquet"))}) where path_in_schema = ${lit(key)} group by file_name`,
  )) as [string[], string[], string[]];
  return files.map((file, i) => ({ file, min: mins[i], max: maxs[i] })).filter((p) => p.min !== null && p.max !== null);
}

export interface ReaderOptions {
  /** Entries per cache (returns, metric tables, financials, rating dates, portfolios). */
  cacheEntries?: number;
}

export class SnapshotReader {
  private readonly returnsCache: LruCache<string, ReturnSeries | null>;
  private readonly metricsCache: LruCache<string, MetricRow[] | null>;
  private readonly financialsCache: LruCache<string, CompanyFinancials | null>;
  private readonly ratingsCache: LruCache<string, RatingRow[]>;
  private readonly portfolioCache: LruCache<string, PortfolioResult | null>;
  /** DuckDB runs one query per connection at a time: a small pool lets requests overlap. */
  private next = 0;

  private constructor(
    readonly id: string,
    readonly meta: SnapshotMeta,
    private readonly dir: string,
    private readonly db: { conn: Conn; close(): void },
    private readonly conns: Conn[],
    readonly companies: Company[],
    readonly companyByTicker: Map<string, Company>,
    readonly ratingDates: string[],
    readonly benchmarks: BenchmarkResult[],
    readonly portfolioIds: string[],
    /** Per partitioned table, each part file's key range (from the Parquet statistics). */
    private readonly parts: Map<string, { file: string; min: string; max: string }[]>,
    opts: ReaderOptions,
  ) {
    const n = opts.cacheEntries ?? 2000;
    this.returnsCache = new LruCache(n);
    this.metricsCache = new LruCache(n);
    this.financialsCache = new LruCache(Math.ceil(n / 4));
    this.ratingsCache = new LruCache(16);
    this.portfolioCache = new LruCache(Math.ceil(n / 4));
  }

  static async open(dataDir: string, id: string, opts: ReaderOptions = {}): Promise<SnapshotReader> {
    const dir = snapshotDir(dataDir, id);
    const meta = readMeta(dataDir, id);
    // The object cache keeps each Parquet file's footer after the first read, so a request
    // costs the row groups of its ticker, not the file's metadata again.
    const db = await openDuck(":memory:", { threads: "2", memory_limit: "256MB", enable_object_cache: "true" });
    const conns = [db.conn, await db.connect()];
    try {
      const c = db.conn;
      await c.run(`create view companies as select * from read_parquet(${lit(join(dir, "companies.parquet"))})`);
      const companies = await loadCompanies(c);
      const [dates = []] = (await columns(c, `select distinct strftime(date, '%Y-%m-%d') from read_parquet(${lit(join(dir, "ratings.parquet"))}) order by 1`)) as [string[]];
      const benchmarks = await loadSnapshotBenchmarks(c, dir);
      const [pids = []] = (await columns(c, `select id from read_parquet(${lit(join(dir, "portfolios.parquet"))}) order by id`)) as [string[]];
      const parts = new Map<string, { file: string; min: string; max: string }[]>();
      for (const [t, key] of PARTITIONED) if (existsSync(join(dir, t))) parts.set(t, await partRanges(c, join(dir, t), key));
      return new SnapshotReader(id, meta, dir, db, conns, companies, new Map(companies.map((x) => [x.ticker.toUpperCase(), x])), dates, benchmarks, pids, parts, opts);
    } catch (e) {
      db.close();
      throw e;
    }
  }

  private conn(): Conn {
    return this.conns[this.next++ % this.conns.length];
  }

  /** The table as a relation; for a partitioned table and a key, only the part that can hold it. */
  private rel(t: string, key?: string): string {
    const parts = this.parts.get(t);
    if (key === undefined || !parts) return tableOf(this.dir, t);
    const hit = parts.filter((p) => p.min <= key && key <= p.max).map((p) => lit(p.file));
    return hit.length ? `read_parquet([${hit.join(", ")}])` : tableOf(this.dir, t);
  }

  /** Daily returns of a ticker (as stored), or undefined. */
  async stockReturns(ticker: string): Promise<ReturnSeries | undefined> {
    let r = this.returnsCache.get(ticker);
    if (r === undefined) {
      const s = await seriesOf(this.conn(), `select id, strftime(date, '%Y-%m-%d'), ret from ${this.rel("stock_returns")} where id = ${lit(ticker)} order by date`);
      r = s.has(ticker) ? asReturns(s.get(ticker)) : null;
      this.returnsCache.set(ticker, r);
    }
    return r ?? undefined;
  }

  /** Full-period metric rows of a stock (id = ticker) or portfolio, plain or against a benchmark. */
  async metricRows(kind: "stock" | "portfolio", id: string, benchmarkId?: string | null): Promise<MetricRow[] | undefined> {
    const key = metricsKey(kind, id, benchmarkId);
    let rows = this.metricsCache.get(key);
    if (rows === undefined) {
      const into = new Map<string, MetricRow[]>();
      const names = new Map(this.benchmarks.map((b) => [b.id, b.name]));
      const bench = benchmarkId ? `benchmark = ${lit(benchmarkId)}` : "benchmark is null";
      await readMetricRows(this.conn(), this.rel(`${kind}_metrics`, id), kind, (s) => (kind === "stock" ? s : "Portfolio"), (b) => names.get(b) ?? b, into, `where subject = ${lit(id)} and ${bench}`);
      rows = into.get(key) ?? null;
      this.metricsCache.set(key, rows);
    }
    return rows ?? undefined;
  }

  /** One ticker's statements of one type (the financials key: upper-case ticker). */
  async financials(ticker: string, type: FinancialType): Promise<FinancialSet | undefined> {
    let f = this.financialsCache.get(ticker);
    if (f === undefined) {
      f = null;
      if (existsSync(join(this.dir, financialTable("income")))) {
        const m = await readFinancialTables(this.conn(), (s) => this.rel(financialTable(s), ticker), `where ticker = ${lit(ticker)}`);
        f = m.get(ticker) ?? null;
      }
      this.financialsCache.set(ticker, f);
    }
    return f?.[type];
  }

  /** Ratings of one rating date ordered by ticker; `offset`/`limit` page through them. */
  async ratingsOn(date: string, page: { offset?: number; limit?: number } = {}): Promise<RatingRow[]> {
    let all = this.ratingsCache.get(date);
    if (!all) {
      all = await loadRatings(this.conn(), `(select * from read_parquet(${lit(join(this.dir, "ratings.parquet"))}) where date = ${lit(date)}::date)`);
      this.ratingsCache.set(date, all);
    }
    const from = page.offset ?? 0;
    return all.slice(from, page.limit === undefined ? undefined : from + page.limit);
  }

  /** One portfolio with its returns and holdings, or undefined. */
  async portfolio(id: string): Promise<PortfolioResult | undefined> {
    let p = this.portfolioCache.get(id);
    if (p === undefined) {
      p = (await readPortfolios(this.conn(), this.dir, id)).get(id) ?? null;
      this.portfolioCache.set(id, p);
    }
    return p ?? undefined;
  }

  close(): void {
    this.db.close();
  }
}
