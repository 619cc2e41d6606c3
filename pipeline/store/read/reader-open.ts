// What opening a snapshot reader reads (pipeline/store/read/snapshot-reader.ts): the files requests
// may read and their footers warmed, the reader database's settings and small in-memory tables (the
// companies, the last rating date's rows), the rating dates and the portfolio ids.
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { Binds, type Conn, columns } from "../duck/duck.ts";
import { datedRelation } from "../snapshot/dated-parts.ts";
import { FINANCIAL_ROWS, FINANCIAL_STATEMENTS, financialTable } from "../snapshot/financial-tables.ts";
import { setRatingsView } from "./load-snapshot.ts";

/**
 * Reads each file's footer (schema, row-group statistics) into DuckDB's metadata and file caches:
 * the first request after a swap then decodes only its ticker's row groups instead of parsing
 * footers cold (the footer of the 1,932 row groups of stock_returns at 5,000 × 25 alone costs
 * more than a warm read). One file at a time on one connection: DuckDB's calls run on libuv's
 * thread pool (4 threads), which the requests the old reader still serves need too.
 */
export async function warm(c: Conn, files: string[]): Promise<void> {
  for (const f of files) await c.run("select * from read_parquet($f) limit 0", { f });
}

/** The last rating date's rows, an in-memory table of the reader's database. */
export const LAST_DAY = "ratings_last_day";

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
export async function prepare(c: Conn, conns: Conn[], dir: string): Promise<void> {
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
export async function ratingDates(c: Conn, dir: string): Promise<string[]> {
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
export async function portfolioIds(c: Conn, dir: string): Promise<{ all: string[]; predefined: string[] }> {
  const file = { f: join(dir, "portfolios.parquet") };
  const [all = []] = (await columns(c, "select id from read_parquet($f) order by id", file)) as [string[]];
  const [predefined = []] = (await columns(c, "select id from read_parquet($f) where owner_id is null", file)) as [
    string[],
  ];
  return { all, predefined };
}

export interface ReaderOptions {
  /** Entries per cache (returns, metric tables, financials, rating dates, portfolios). */
  cacheEntries?: number;
  /** Read every Parquet footer the requests will need before open() resolves (default true). */
  warm?: boolean;
}

/** Entries per cache. */
export const n0 = (o: ReaderOptions) => o.cacheEntries ?? 2000;
