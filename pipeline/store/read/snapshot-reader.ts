// A published snapshot read lazily: DuckDB over its Parquet files answers each request's slice
// (one ticker's returns, one subject's metric rows, one date's ratings …), with bounded caches.
// Opening reads only the small tables, so a new snapshot is ready in about the time of a few
// queries and memory does not grow with stocks × days. Same values as the in-memory loader.
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { LRUCache } from "lru-cache";
import type { RatingEvidence } from "../../ratings/evidence.ts";
import type { Company, MetricRow, RatingRow, ReturnSeries } from "../../types.ts";
import { Binds, type Conn, columns, openDuck } from "../duck/duck.ts";
import { DUCK_MEMORY } from "../duck/duck-memory.ts";
import { numericColumns } from "../duck/typed-read.ts";
import { datedRelation } from "../snapshot/dated-parts.ts";
import {
  FINANCIAL_ROWS,
  FINANCIAL_STATEMENTS,
  financialTable,
  readFinancialRows,
  readFinancialTables,
} from "../snapshot/financial-tables.ts";
import { readMetricRows } from "../snapshot/metric-tables.ts";
import type {
  BenchmarkResult,
  CompanyFinancials,
  FinancialSet,
  FinancialType,
  PortfolioResult,
} from "../snapshot/model.ts";
import { metricsKey } from "../snapshot/model.ts";
import { PARTITIONED, type PartRange, partRanges, RATINGS_LATEST, readPartRanges } from "../snapshot/reader-index.ts";
import { readMeta, type SnapshotMeta, snapshotDir } from "../snapshot/snapshots.ts";
import { Calendars } from "./calendars.ts";
import { readRatingEvidence } from "./evidence-read.ts";
import { loadCompanies, loadRatings } from "./frame-reads.ts";
import { loadSnapshotBenchmarks, readPortfolios, setRatingsView, tableOf } from "./load-snapshot.ts";
import { readRatingComponents } from "./rating-components.ts";
import { latestRatings, type RatedQuery, ratedCount, ratedPage, ratingHistories } from "./rating-queries.ts";

/**
 * Reads each file's footer (schema, row-group statistics) into DuckDB's metadata and file caches:
 * the first request after a swap then decodes only its ticker's row groups instead of parsing
 * footers cold (the footer of the 1,932 row groups of stock_returns at 5,000 × 25 alone costs
 * more than a warm read). One file at a time on one connection: DuckDB's calls run on libuv's
 * thread pool (4 threads), which the requests the old reader still serves need too.
 */
async function warm(c: Conn, files: string[]): Promise<void> {
  for (const f of files) await c.run("select * from read_parquet($f) limit 0", { f });
}

/** A cached "read, and not there" (lru-cache holds no null). */
const NONE = Symbol("none");
type Held<T> = T | typeof NONE;
const lru = <V extends {}>(max: number) => new LRUCache<string, V>({ max });
/** A cache hit as the reader returns it: undefined for a miss and for a known absence. */
const found = <T>(v: Held<T> | undefined): T | undefined => (v === NONE ? undefined : v);

/** The last rating date's rows, an in-memory table of the reader's database. */
const LAST_DAY = "ratings_last_day";

export interface ReaderOptions {
  /** Entries per cache (returns, metric tables, financials, rating dates, portfolios). */
  cacheEntries?: number;
  /** Read every Parquet footer the requests will need before open() resolves (default true). */
  warm?: boolean;
}

/** Tables no request reads (the reader serves returns, not prices). */
const NOT_READ = new Set(["prices.parquet", "prices.days", "benchmark_source.parquet"]);

/** Every Parquet file of the snapshot that requests may read: top-level tables and each part of a partitioned one. */
export function readableFiles(dir: string): string[] {
  const out: string[] = [];
  // statements are read from their one-query copy when there is one
  const skip = existsSync(join(dir, FINANCIAL_ROWS))
    ? new Set([...NOT_READ, ...FINANCIAL_STATEMENTS.map(financialTable)])
    : NOT_READ;
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (name.endsWith(".parquet") && !skip.has(name)) out.push(path);
    else if (!name.startsWith(".") && !skip.has(name) && statSync(path).isDirectory())
      for (const f of readdirSync(path).sort()) if (f.endsWith(".parquet")) out.push(join(path, f));
  }
  return out;
}

/**
 * The reader database's settings and small in-memory tables: companies (one row per stock) and
 * the last rating date's rows (the default list). Every rated-stocks page joins them, and a table
 * costs a fraction of a Parquet decode per query.
 */
async function prepare(c: Conn, conns: Conn[], dir: string): Promise<void> {
  // The metadata cache keeps each Parquet file's footer after the first read, so a request
  // costs the row groups of its ticker, not the file's metadata again. (`enable_object_cache`
  // is a no-op since DuckDB 1.1; this setting needs the parquet extension loaded first.)
  await c.run("load parquet");
  await c.run("set global parquet_metadata_cache = true");
  await c.run("create table companies as select * from read_parquet($f)", { f: join(dir, "companies.parquet") });
  // every pooled connection reads the view (its file list is a per-connection variable)
  await setRatingsView(conns, dir);
}

/** The snapshot's rating dates, ascending; the last one's rows become the in-memory LAST_DAY table. */
async function ratingDates(c: Conn, dir: string): Promise<string[]> {
  const rb = new Binds();
  const [dates = []] = (await columns(
    c,
    `select distinct strftime(date, '%Y-%m-%d') from ${datedRelation(dir, "ratings", rb)} order by 1`,
    rb.params,
  )) as [string[]];
  await c.run(`create table ${LAST_DAY} as select * from ratings where date = $d::date`, {
    d: dates.at(-1) ?? "1970-01-01",
  });
  return dates;
}

/** Every portfolio id (sorted), and the predefined ones (no owner) in file order, as the in-memory loader has them. */
async function portfolioIds(c: Conn, dir: string): Promise<{ all: string[]; predefined: string[] }> {
  const file = { f: join(dir, "portfolios.parquet") };
  const [all = []] = (await columns(c, "select id from read_parquet($f) order by id", file)) as [string[]];
  const [predefined = []] = (await columns(c, "select id from read_parquet($f) where owner_id is null", file)) as [
    string[],
  ];
  return { all, predefined };
}

const n0 = (o: ReaderOptions) => o.cacheEntries ?? 2000;
const emptySet = (): FinancialSet => ({ income: [], balance: [], cashflow: [], derived: [] });

export class SnapshotReader {
  private readonly returnsCache: LRUCache<string, Held<ReturnSeries>>;
  private readonly metricsCache: LRUCache<string, Held<MetricRow[]>>;
  private readonly financialsCache: LRUCache<string, Held<CompanyFinancials>>;
  private readonly ratingsCache: LRUCache<string, RatingRow[]>;
  private readonly portfolioCache: LRUCache<string, Held<PortfolioResult>>;
  private readonly historyCache: LRUCache<string, RatingRow[]>;
  private readonly asOfCache: LRUCache<string, Held<RatingRow>>;
  /** Histories being read, and the batch of cold tickers the next scan will read (ratingHistory). */
  private readonly historyPending = new Map<string, Promise<RatingRow[]>>();
  private historyBatch: { tickers: string[]; done: Promise<Map<string, RatingRow[]>> } | null = null;
  readonly companyById: Map<string, Company>;
  /** Dates arrays shared by the return series of one calendar. */
  private readonly calendars = new Calendars();
  /** Queries running now; a retired reader closes once this is 0. */
  private inFlight = 0;
  private lastUsed = Date.now();
  private closed = false;
  private evidence: Promise<RatingEvidence[]> | null = null;
  /** DuckDB runs one query per connection at a time: a small pool lets requests overlap. */
  private next = 0;

  private constructor(
    readonly id: string,
    readonly meta: SnapshotMeta,
    readonly dir: string,
    private readonly db: { conn: Conn; close(): void },
    private readonly conns: Conn[],
    readonly companies: Company[],
    readonly companyByTicker: Map<string, Company>,
    readonly ratingDates: string[],
    readonly benchmarks: BenchmarkResult[],
    readonly portfolioIds: string[],
    /** Per partitioned table, each part file's key range (from the Parquet statistics). */
    private readonly parts: Map<string, PartRange[]>,
    /** Ids of the predefined portfolios (no owner). */
    readonly predefinedIds: string[],
    /** Every ticker's latest rating (upper-case ticker): one row per stock, read at open. */
    readonly latest: Map<string, RatingRow>,
    opts: ReaderOptions,
  ) {
    this.companyById = new Map(companies.map((c) => [c.id, c]));
    this.historyCache = lru(Math.ceil(n0(opts) / 4));
    this.asOfCache = lru(n0(opts) * 4);
    const n = opts.cacheEntries ?? 2000;
    this.returnsCache = lru(n);
    this.metricsCache = lru(n);
    this.financialsCache = lru(Math.ceil(n / 4));
    this.ratingsCache = lru(16);
    this.portfolioCache = lru(Math.ceil(n / 4));
  }

  static async open(dataDir: string, id: string, opts: ReaderOptions = {}): Promise<SnapshotReader> {
    const dir = snapshotDir(dataDir, id);
    const meta = readMeta(dataDir, id);
    const db = await openDuck(":memory:", { threads: "2", memory_limit: DUCK_MEMORY.snapshotReader });
    const conns = [db.conn, await db.connect(), await db.connect(), await db.connect()];
    try {
      const c = db.conn;
      await prepare(c, conns, dir);
      const companies = await loadCompanies(c);
      const dates = await ratingDates(c, dir);
      const benchmarks = await loadSnapshotBenchmarks(c, dir);
      const { all, predefined } = await portfolioIds(c, dir);
      // from the index written at publish when there is one (reader-index.ts), else derived here
      let parts = readPartRanges(dir);
      if (!parts) {
        parts = new Map();
        for (const [t, key] of PARTITIONED)
          if (existsSync(join(dir, t))) parts.set(t, await partRanges(c, join(dir, t), key));
      }
      const latestFile = join(dir, RATINGS_LATEST);
      const latest = await latestRatings(c, undefined, undefined, existsSync(latestFile) ? latestFile : undefined);
      if (opts.warm !== false) await warm(c, readableFiles(dir));
      const byTicker = new Map(companies.map((x) => [x.ticker.toUpperCase(), x]));
      return new SnapshotReader(
        id,
        meta,
        dir,
        db,
        conns,
        companies,
        byTicker,
        dates,
        benchmarks,
        all,
        parts,
        predefined,
        latest,
        opts,
      );
    } catch (e) {
      db.close();
      throw e;
    }
  }

  /** Files whose bytes DuckDB has read (footers at least): what a request would not open cold. */
  async openedFiles(): Promise<Set<string>> {
    const [paths = []] = (await this.query((c) =>
      columns(c, "select distinct path from duckdb_external_file_cache()"),
    )) as [string[]];
    return new Set(paths);
  }

  private conn(): Conn {
    return this.conns[this.next++ % this.conns.length];
  }

  /** Runs one read on the next pooled connection, counted so a retired reader waits for it. */
  private async query<T>(fn: (c: Conn) => Promise<T>): Promise<T> {
    if (this.closed) throw new Error(`snapshot ${this.id} is closed`);
    this.inFlight++;
    try {
      return await fn(this.conn());
    } finally {
      this.inFlight--;
      this.lastUsed = Date.now();
    }
  }

  /** One page of a rating date's rated stocks, filtered and ordered in SQL. */
  async ratedPage(
    q: RatedQuery,
    offset: number,
    limit: number,
  ): Promise<{ rows: RatingRow[]; companyTickers: string[] }> {
    return this.query((c) => ratedPage(c, q, offset, limit, this.dayTable(q.date)));
  }
  async ratedCount(q: RatedQuery): Promise<number> {
    return this.query((c) => ratedCount(c, q, this.dayTable(q.date)));
  }
  /** The in-memory table of the last rating date's rows when `date` is that date. */
  private dayTable(date: string): string | undefined {
    return date === this.ratingDates.at(-1) ? LAST_DAY : undefined;
  }

  /** Each (upper-case) ticker's latest rating on or before `date`; latest overall without one. */
  async ratingsAsOf(upperTickers: readonly string[], date?: string): Promise<(RatingRow | undefined)[]> {
    if (date === undefined) return upperTickers.map((t) => this.latest.get(t));
    const missing = [...new Set(upperTickers.filter((t) => this.asOfCache.get(`${date}|${t}`) === undefined))];
    if (missing.length) {
      // a long list scans the date's history once instead of naming every ticker
      const got = await this.query((c) => latestRatings(c, date, missing.length > 500 ? undefined : missing));
      for (const t of missing) this.asOfCache.set(`${date}|${t}`, got.get(t) ?? NONE);
      return upperTickers.map((t) => (got.has(t) ? got.get(t) : found(this.asOfCache.get(`${date}|${t}`))));
    }
    return upperTickers.map((t) => found(this.asOfCache.get(`${date}|${t}`)));
  }

  /**
   * An (upper-case) ticker's rating rows, ascending by date. Cold tickers asked for in the same
   * turn of the event loop (a GraphQL list of stocks with their histories) are read by one scan:
   * the ratings are stored by date, so each history alone reads the whole table (~70 ms of CPU
   * at 5,000 × 25).
   */
  async ratingHistory(upperTicker: string): Promise<RatingRow[]> {
    const h = this.historyCache.get(upperTicker);
    if (h) return h;
    let p = this.historyPending.get(upperTicker);
    if (!p) {
      if (!this.historyBatch) {
        const batch = {
          tickers: [] as string[],
          done: null as unknown as Promise<Map<string, RatingRow[]>>,
        };
        this.historyBatch = batch;
        batch.done = new Promise<void>((r) => setImmediate(r)).then(() => {
          this.historyBatch = null;
          return this.query((c) => ratingHistories(c, batch.tickers));
        });
      }
      const batch = this.historyBatch;
      batch.tickers.push(upperTicker);
      p = batch.done.then((m) => {
        const rows = m.get(upperTicker) ?? [];
        this.historyCache.set(upperTicker, rows);
        return rows;
      });
      const settled = () => this.historyPending.delete(upperTicker);
      p.then(settled, settled);
      this.historyPending.set(upperTicker, p);
    }
    return p;
  }

  /** An (upper-case) ticker's rating components on a rating date ([]: none, as for vendor ratings). */
  ratingComponents(upperTicker: string, date: string) {
    return this.query((c) => readRatingComponents(c, this.dir, upperTicker, date));
  }

  /** All statement types of one ticker (the financials key: upper-case ticker), or undefined. */
  async companyFinancials(ticker: string): Promise<CompanyFinancials | undefined> {
    await this.financials(ticker, "annual");
    return found(this.financialsCache.get(ticker));
  }

  /** The table as a relation (files bound in `b`); for a partitioned table and a key, the part that can hold it. */
  private rel(b: Binds, t: string, key?: string): string {
    const parts = this.parts.get(t);
    if (key === undefined || !parts) return tableOf(this.dir, t, b);
    const hit = parts.filter((p) => p.min <= key && key <= p.max).map((p) => p.file);
    return hit.length ? `read_parquet(${b.list(hit)})` : tableOf(this.dir, t, b);
  }

  /** The rating evidence (pipeline/ratings/evidence.ts): two small tables, read once. */
  ratingEvidence(): Promise<RatingEvidence[]> {
    this.evidence ??= this.query((c) => readRatingEvidence(c, this.dir));
    this.evidence.catch(() => (this.evidence = null));
    return this.evidence;
  }

  /** Daily returns of a ticker (as stored), or undefined. */
  async stockReturns(ticker: string): Promise<ReturnSeries | undefined> {
    let r = this.returnsCache.get(ticker);
    if (r === undefined) {
      // days and values cross as typed arrays; the dates array is shared by every series of the same calendar
      const b = new Binds();
      const sql =
        `select (date - DATE '1970-01-01')::integer, ret::double ` +
        `from ${this.rel(b, "stock_returns", ticker)} where id = ${b.v(ticker)} order by date`;
      const [days, ret] = await this.query((c) =>
        numericColumns(c, sql, ["i32", "f64"] as ["i32", "f64"], { materialized: true, params: b.params }),
      );
      r = days.length ? { dates: this.calendars.datesOf(days), returns: ret } : NONE;
      this.returnsCache.set(ticker, r);
    }
    return found(r);
  }

  /** Full-period metric rows of a stock (id = ticker) or portfolio, plain or against a benchmark. */
  async metricRows(
    kind: "stock" | "portfolio",
    id: string,
    benchmarkId?: string | null,
  ): Promise<MetricRow[] | undefined> {
    const key = metricsKey(kind, id, benchmarkId);
    let rows = this.metricsCache.get(key);
    if (rows === undefined) {
      const into = new Map<string, MetricRow[]>();
      const names = new Map(this.benchmarks.map((b) => [b.id, b.name]));
      const b = new Binds();
      const rel = this.rel(b, `${kind}_metrics`, id);
      const bench = benchmarkId ? `benchmark = ${b.v(benchmarkId)}` : "benchmark is null";
      const where = `where subject = ${b.v(id)} and ${bench}`;
      await this.query((c) =>
        readMetricRows(
          c,
          rel,
          kind,
          (s) => (kind === "stock" ? s : "Portfolio"),
          (x) => names.get(x) ?? x,
          into,
          where,
          b.params,
        ),
      );
      rows = into.get(key) ?? NONE;
      this.metricsCache.set(key, rows);
    }
    return found(rows);
  }

  /** One ticker's statements of one type (the financials key: upper-case ticker). */
  async financials(ticker: string, type: FinancialType): Promise<FinancialSet | undefined> {
    let f = this.financialsCache.get(ticker);
    if (f === undefined) {
      f = NONE;
      // the one-query copy when the snapshot has it (docs/data/snapshot.md), else the four wide tables
      const rows = this.parts.has(FINANCIAL_ROWS)
        ? await this.query((c) => readFinancialRows(c, (b) => this.rel(b, FINANCIAL_ROWS, ticker), ticker))
        : undefined;
      if (rows) f = rows;
      else if (existsSync(join(this.dir, financialTable("income")))) {
        // one statement per pooled connection, in parallel: a cold read costs one table's query
        const parts = await Promise.all(
          FINANCIAL_STATEMENTS.map((st) =>
            this.query((c) =>
              readFinancialTables(c, (s, b) => this.rel(b, financialTable(s), ticker), ticker, [st]),
            ).then((m) => m.get(ticker)),
          ),
        );
        if (parts.some((x) => x)) {
          f = { annual: emptySet(), quarterly: emptySet(), ttm: emptySet() };
          for (const [i, st] of FINANCIAL_STATEMENTS.entries())
            for (const type of ["annual", "quarterly", "ttm"] as const) f[type][st] = parts[i]?.[type][st] ?? [];
        }
      }
      this.financialsCache.set(ticker, f);
    }
    return found(f)?.[type];
  }

  /** Ratings of one rating date ordered by ticker; `offset`/`limit` page through them. */
  async ratingsOn(date: string, page: { offset?: number; limit?: number } = {}): Promise<RatingRow[]> {
    let all = this.ratingsCache.get(date);
    if (!all) {
      const b = new Binds();
      const rel = `(select * from ${datedRelation(this.dir, "ratings", b)} where date = ${b.v(date)}::date)`;
      all = await this.query((c) => loadRatings(c, rel, b.params));
      this.ratingsCache.set(date, all);
    }
    const from = page.offset ?? 0;
    return all.slice(from, page.limit === undefined ? undefined : from + page.limit);
  }

  /** One portfolio with its returns and holdings, or undefined. */
  async portfolio(id: string): Promise<PortfolioResult | undefined> {
    let p = this.portfolioCache.get(id);
    if (p === undefined) {
      p = (await this.query((c) => readPortfolios(c, this.dir, id))).get(id) ?? NONE;
      this.portfolioCache.set(id, p);
    }
    return found(p);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.db.close();
  }

  /**
   * Closes after letting go of DuckDB's caches in queries (which run off the event loop): closing
   * is synchronous, and freeing the cached file blocks and buffers inside it blocked the server's
   * event loop for 0.7 s at 5,000 × 25 after 100 cold reads (0.16–0.2 s after the release; load ~9).
   */
  async closeReleased(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      for (const sql of [
        "set enable_external_file_cache = false",
        "set global parquet_metadata_cache = false",
        `set memory_limit = '${DUCK_MEMORY.releasedReader}'`,
      ])
        await this.db.conn.run(sql);
    } catch {
      // a failed release only makes the close slower
    }
    this.db.close();
  }

  /**
   * After a swap: closes once nothing has been read for `graceMs` (a request that took the old
   * reference may still be between two reads; its queries finish on this reader).
   */
  retire(graceMs = 5000, onClosed: () => void = () => undefined): void {
    this.lastUsed = Date.now();
    const t = setInterval(
      () => {
        if (this.inFlight === 0 && Date.now() - this.lastUsed >= graceMs) {
          clearInterval(t);
          void this.closeReleased().finally(onClosed);
        }
      },
      Math.max(10, graceMs / 2),
    );
    t.unref();
  }
}
