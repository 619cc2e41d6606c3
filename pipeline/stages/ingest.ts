// Stage 1: read and validate every source table; nothing is computed until the whole source is
// clean. Fundamentals are validated and built per ticker range (financials-partition.ts), so the
// statements of the whole universe are never in one heap.
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sourceFingerprintAsync } from "../sources/fingerprint.ts";
import { splitFundamentals } from "../sources/fundamentals-split.ts";
import { SourceRejectedError, type StagedSource, stageSource } from "../sources/index.ts";
import type { RejectedRow } from "../sources/report.ts";
import { type Conn, columns } from "../store/duck/duck.ts";
import { appendTable, exportParquet, exportParquetFile } from "../store/duck/write.ts";
import { FINANCIAL_DIRS, FINANCIAL_STATEMENTS, financialTable } from "../store/snapshot/financial-tables.ts";
import { linkTree } from "../store/snapshot/link.ts";
import type { StageContext } from "./context.ts";
import type { FinancialsJob } from "./financials-partition.ts";
import { type PartitionJob, runPartitionsInline } from "./partition-jobs.ts";
import { boundsOf, sortedKeys, tickerRanges } from "./partitions.ts";

export interface IngestResult {
  source: StagedSource;
  /** Companies with statements; -1 when the published snapshot's tables were reused. */
  financials: number;
  /**
   * prices.parquet, ratings.parquet and benchmark_source.parquet: written on a connection of
   * their own (`ctx.connect`) while the caller reads the staged tables into frames and backtests.
   * Await it before anything reads those files, and before the staging folder is published or removed.
   */
  written: Promise<void>;
}

/**
 * `merge` runs on the clean staged tables before anything is derived (backfill uses it).
 * `financials: false` (the flow, where they are partition jobs of their own) leaves the fundamentals out.
 */
export async function ingestStage(
  ctx: StageContext,
  sourceDir: string,
  merge?: (s: StagedSource) => Promise<void>,
  opts: {
    financials?: boolean;
    /**
     * Called once the source's own tables are known clean and their export has started (not for
     * a merge), before the fundamentals are awaited: work on `ctx.conn` that needs neither the
     * financials nor the company ids can start here (the runner's stock metric partitions).
     */
    clean?: (source: StagedSource, written: Promise<void>) => Promise<void>;
  } = {},
): Promise<IngestResult> {
  const step = (name: string, done: number, total: number) => ctx.progress?.(`ingest: ${name}`, done, total);
  const financials = financialsStarter(ctx, sourceDir, merge, opts.financials);
  let source: StagedSource;
  let written: Promise<void> | null = null;
  try {
    source = await stageSource(ctx.conn, sourceDir, {
      partial: merge !== undefined,
      progress: step,
      loaded: async (t) => (t === "companies" ? financials.start() : undefined),
    });
    step("fundamentals", 0, 2);
    if (!financials.started()) await financials.start();
    // A clean source that nothing merges into: its big tables are written while the fundamentals
    // finish and, on a second connection, while the caller goes on (company ids are assigned only
    // once everything is known to be clean; the files are published only by the caller).
    if (source.rejectCount === 0 && !merge) written = (await exportWhileStaging(ctx, source, opts.clean)).written;
  } catch (e) {
    await Promise.all([financials.settled(), written?.catch(() => undefined)]);
    throw e;
  }
  return finishIngest(ctx, source, financials.result(), merge, written);
}

type FinancialsResult = Awaited<ReturnType<typeof financialsStage>>;

/**
 * The fundamentals' stage, started once the company tickers are staged: their partitions (worker
 * threads, files of their own) run while this thread's DuckDB reads prices and ratings.
 */
function financialsStarter(
  ctx: StageContext,
  sourceDir: string,
  merge: ((s: StagedSource) => Promise<void>) | undefined,
  enabled?: boolean,
) {
  const fundamentals = join(sourceDir, "fundamentals");
  const none = (companies: number): Promise<FinancialsResult> =>
    Promise.resolve({ companies, rejects: [] as RejectedRow[], rejectCount: 0 });
  let financials: Promise<FinancialsResult> | null = null;
  return {
    async start() {
      if (enabled === false) {
        financials = none(0);
        return;
      }
      // A backfill whose source gives no fundamentals keeps the published statements whole.
      if (merge && !existsSync(fundamentals) && keepPublishedFinancials(ctx)) {
        ctx.log.info({}, "backfill without fundamentals: financial tables kept from the published snapshot");
        financials = none(-1);
        return;
      }
      const tickers = (await sortedKeys(ctx.conn, "companies", "upper(ticker)").catch(() => [] as string[])).filter(
        Boolean,
      );
      financials = financialsStage(ctx, fundamentals, tickers);
      financials.catch(() => undefined); // awaited by the caller; not an unhandled rejection meanwhile
    },
    started: () => financials !== null,
    result: () => financials!,
    /** Its jobs write into the staging folder the caller removes on a failure. */
    settled: async () => {
      await financials?.catch(() => undefined);
    },
  };
}

/** The source's tables written on a second connection (when there is one) while the caller goes on. */
async function exportWhileStaging(
  ctx: StageContext,
  source: StagedSource,
  clean?: (source: StagedSource, written: Promise<void>) => Promise<void>,
): Promise<{ written: Promise<void> }> {
  const conn = ctx.connect ? await ctx.connect() : ctx.conn;
  const written = exportSourceTables(conn, ctx.out, source);
  written.catch(() => undefined); // the caller awaits it; not an unhandled rejection meanwhile
  try {
    if (conn === ctx.conn) await written;
    await clean?.(source, written);
  } catch (e) {
    await written.catch(() => undefined);
    throw e;
  }
  return { written };
}

/** Once the fundamentals are in: every reject reported, the merge, the tables and the companies written. */
async function finishIngest(
  ctx: StageContext,
  source: StagedSource,
  financials: Promise<FinancialsResult>,
  merge: ((s: StagedSource) => Promise<void>) | undefined,
  written: Promise<void> | null,
): Promise<IngestResult> {
  try {
    const fin = await financials;
    const rejects = [...source.rejects, ...fin.rejects];
    if (source.rejectCount + fin.rejectCount > 0)
      throw new SourceRejectedError(rejects, source.rejectCount + fin.rejectCount);
    await merge?.(source);
    ctx.progress?.("ingest: writing tables", 1, 2);
    // a merge rewrote the tables: their staged order says nothing any more
    if (!written) {
      written = exportSourceTables(ctx.conn, ctx.out, merge ? { ...source, keyOrdered: undefined } : source);
      await written;
    }
    await companiesWithIds(ctx);
    await exportParquet(ctx.conn, "companies", ctx.out, [], "ticker");
    ctx.log.info({ rows: source.rowCounts, fundamentals: fin.companies }, "source ingested");
    return { source, financials: fin.companies, written };
  } catch (e) {
    await written?.catch(() => undefined);
    throw e;
  }
}

/**
 * The source's own tables as staged: prices, ratings and the index series. Reads only; `conn` may be a second
 * connection.
 */
async function exportSourceTables(conn: Conn, out: string, source: StagedSource): Promise<void> {
  // staged in (ticker, date) order already (a file written in key order): written as it is, no sort
  await exportParquet(conn, "prices", out, [], source.keyOrdered?.has("prices") ? undefined : "ticker, date");
  if (source.tables.has("ratings")) await exportParquet(conn, "ratings", out, [], "date, ticker");
  if (source.tables.has("benchmarks"))
    await exportParquetFile(conn, "benchmarks", join(out, "benchmark_source.parquet"), [], "benchmark, date");
}

const INPUTS = "inputs.json";

/**
 * Fundamentals identical (by bytes) to the published snapshot's are not read again: its
 * financial tables are hard-linked. A nightly run that only adds trading days skips the stage.
 */
/** The companies whose statements are kept (none listed: every record, the run fails on its companies anyway). */
export const knownTickers = (tickers: readonly string[]) => (tickers.length ? new Set(tickers) : undefined);

/** What the financial tables are made of: the fundamentals' bytes and the companies they are kept for. */
export async function fundamentalsInputId(dir: string, tickers: readonly string[]): Promise<string> {
  const companies = createHash("sha256").update(tickers.join("\n")).digest("hex").slice(0, 16);
  return `${existsSync(dir) ? await sourceFingerprintAsync(dir) : "none"}/${companies}`;
}

export function reusePublished(ctx: Pick<StageContext, "out" | "published">, fundamentalsId: string): boolean {
  writeFileSync(join(ctx.out, INPUTS), JSON.stringify({ fundamentals: fundamentalsId }));
  const prev = ctx.published;
  if (!prev || !existsSync(join(prev, INPUTS))) return false;
  const was = (JSON.parse(readFileSync(join(prev, INPUTS), "utf8")) as { fundamentals?: string }).fundamentals;
  // a snapshot from before `financial_rows` is rebuilt once, so the reader gets its one-query copy
  if (was !== fundamentalsId || !FINANCIAL_DIRS.every((t) => existsSync(join(prev, t)))) return false;
  linkFinancials(prev, ctx.out);
  return true;
}

/**
 * The published snapshot's financial tables hard-linked, with the inputs they were built from; false when it has none.
 */
function keepPublishedFinancials(ctx: Pick<StageContext, "out" | "published">): boolean {
  const prev = ctx.published;
  if (!prev || !FINANCIAL_STATEMENTS.every((s) => existsSync(join(prev, financialTable(s))))) return false;
  if (existsSync(join(prev, INPUTS))) copyFileSync(join(prev, INPUTS), join(ctx.out, INPUTS));
  linkFinancials(prev, ctx.out);
  return true;
}

/**
 * The financial tables of `prev` hard-linked into `out`: the four statements and, when it has it, their one-query copy.
 */
function linkFinancials(prev: string, out: string): void {
  for (const t of FINANCIAL_DIRS) if (existsSync(join(prev, t))) linkTree(join(prev, t), join(out, t));
}

/** Splits the fundamentals by ticker range (`tickers`: the companies, sorted) and runs one partition job per range. */
async function financialsStage(ctx: StageContext, dir: string, tickers: string[]) {
  if (reusePublished(ctx, await fundamentalsInputId(dir, tickers))) {
    ctx.log.info({}, "fundamentals unchanged: financial tables reused from the published snapshot");
    return { companies: -1, rejects: [] as RejectedRow[], rejectCount: 0 };
  }
  const ranges = tickerRanges(tickers, ctx.tickersPerPartition, ctx.parallelism);
  const splitDir = join(ctx.out, ".fundamentals-split");
  try {
    const slices = await splitFundamentals(dir, splitDir, boundsOf(ranges), knownTickers(tickers));
    const jobs: PartitionJob[] = slices.map((sliceDir, part) => ({
      stage: "financials",
      data: { out: ctx.out, sliceDir, part } satisfies FinancialsJob,
    }));
    const run = ctx.runPartitions ?? runPartitionsInline;
    const results = await run<{ companies: number; rejects: RejectedRow[]; rejectCount: number }>(jobs, (d) =>
      ctx.progress?.("financials", d, jobs.length),
    );
    // A file-level reject (missing column) is found in every slice: report it once.
    const seen = new Set<string>();
    const rejects = results
      .flatMap((r) => r.rejects)
      .filter((r) => {
        if (r.row !== 0) return true;
        const k = `${r.file}|${r.column}|${r.reason}`;
        if (seen.has(k)) return false;
        seen.add(k);
        return true;
      });
    const dupes = results.reduce((a, r) => a + r.rejects.length, 0) - rejects.length;
    return {
      companies: results.reduce((a, r) => a + r.companies, 0),
      rejects,
      rejectCount: results.reduce((a, r) => a + r.rejectCount, 0) - dupes,
    };
  } finally {
    rmSync(splitDir, { recursive: true, force: true });
  }
}

/**
 * Each ticker's last priced date, close and return price (`coalesce(adj_close, close)`), from
 * `prices` into the table `last_prices`: the market caps' last close, and what a nightly append
 * continues the returns from without reading the whole published history again.
 */
export const LAST_PRICES_SQL = (prices: string) =>
  `select ticker, max(date) as date, arg_max("close", date) as "close", arg_max(coalesce(adj_close, ` +
  `"close")::double, date) as price from ${prices} group by ticker`;

/**
 * Completes the companies table: ids (from the source, else assigned once by the catalog and
 * kept), stable sector and industry ids, and market cap (given, else shares × last close); writes
 * `last_prices` beside it. `lastPrices`: a `last_prices` table the caller made (else: from `prices`).
 */
export async function companiesWithIds(ctx: StageContext, opts: { lastPrices?: boolean } = {}): Promise<void> {
  const conn: Conn = ctx.conn;
  if (!opts.lastPrices) await conn.run(`create or replace temp table last_prices as ${LAST_PRICES_SQL("prices")}`);
  const [tickers, ids, sectors, industries] = (await columns(
    conn,
    "select ticker, id, sector, industry from companies order by ticker",
  )) as string[][];
  const got = await ctx.catalog.assignIdsOfKinds({
    company: tickers.filter((_, i) => !ids[i]),
    sector: sectors,
    industry: industries,
  });
  const [assigned, sectorIds, industryIds] = [got.company, got.sector, got.industry];
  const given = new Set(ids.filter(Boolean));
  const rowsOut = tickers.map((t, i) => {
    let id = ids[i] || String(assigned.get(t));
    // An assigned id never shadows an id the source gave another company.
    if (!ids[i] && given.has(id)) id = `${id}-${t}`;
    return [t, id, sectorIds.get(sectors[i])!, industryIds.get(industries[i])!];
  });
  await appendTable(
    conn,
    "company_ids",
    [
      ["ticker", "varchar"],
      ["id", "varchar"],
      ["sector_id", "integer"],
      ["industry_id", "integer"],
    ],
    rowsOut,
  );
  await conn.run(`create or replace table companies as
    select i.id, c.ticker, c.name, c.sector, i.sector_id, c.industry, i.industry_id, c.shares_outstanding,
           round(coalesce(c.market_cap, c.shares_outstanding * l.last_close)) as market_cap
    from companies c join company_ids i using (ticker)
    left join (select ticker, "close" as last_close from last_prices) l using (ticker)
    order by ticker`);
  await conn.run(`drop table company_ids`);
  await exportParquet(conn, "last_prices", ctx.out, ["date"], "ticker");
}
