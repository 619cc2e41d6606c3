// The nightly append's `ingest` step (append.ts says the whole): the new rows read and checked as a
// small source of their own, companies and the price, rating and index tables written (the published
// ones hard-linked, the new days as files of their own: dated-parts.ts), the new days' returns from
// each stock's last published price (returns.ts), and the benchmarks continued from their recorded
// states, so the backtests are ready to continue.
import { existsSync, linkSync, mkdirSync, rmSync } from "node:fs";
import { basename, join } from "node:path";
import { writeDeltaSource } from "../sources/append-plan.ts";
import { type StagedSource, stageSource } from "../sources/index.ts";
import { Binds, type Conn, columns, listValue, run as runSql, scalar, setVariable } from "../store/duck/duck.ts";
import { exportParquet } from "../store/duck/write.ts";
import { datedFiles, linkDated, nextDaysFile } from "../store/snapshot/dated-parts.ts";
import { stagingLayout, writeStagingRecord } from "../store/snapshot/staging-layout.ts";
import { type AppendRecord, type AppendRun, appendProgress, lapper, pubRel } from "./append.ts";
import { NotAnAppendError, tailBacktests } from "./append-backtests.ts";
import { publishedDefinitions } from "./backfill.ts";
import { writeRatingEvidence } from "./evidence.ts";
import { companiesWithIds, fundamentalsInputId, LAST_PRICES_SQL, reusePublished } from "./ingest.ts";
import { rangesFromBounds } from "./partitions.ts";
import { writeBenchmarkTables } from "./portfolios.ts";
import { RETURNS_PARTS, RETURNS_ROW_GROUP, returnsDaysFile, returnsFiles } from "./returns.ts";

const one = (conn: Conn, sql: string) => scalar<string | number | null>(conn, sql);

/**
 * The published returns parts, the ranges they cover (each part from its first ticker to the next part's), and the
 * appended days' file.
 */
async function publishedReturns(conn: Conn, base: string) {
  const { parts, days } = returnsFiles(base);
  if (!parts.length)
    throw new NotAnAppendError("the published snapshot's returns are not stored in ticker-range parts");
  // Each part's first ticker from its footer's statistics (one query over the footers), else a scan of it.
  const later = parts.slice(1);
  const stats = later.length
    ? ((await columns(
        conn,
        "select file_name, min(stats_min_value) from parquet_metadata($files::varchar[]) where " +
          "path_in_schema = 'id' group by 1",
        { files: listValue(later) },
      )) as [string[], (string | null)[]])
    : [[], []];
  const fromStats = new Map(stats[0].map((f, i) => [f, stats[1][i]]));
  const bounds: string[] = [];
  for (const f of later)
    bounds.push(fromStats.get(f) ?? String(await scalar(conn, "select min(id) from read_parquet($f)", { f })));
  return { parts, days, ranges: rangesFromBounds(bounds) };
}

/**
 * The append's `ingest` step: the new rows read and checked, companies and the price, rating and
 * index tables written, the new days' returns, and the backtests ready to continue (benchmarks
 * written). Throws NotAnAppendError when the new rows do not simply continue the published history.
 */
export async function appendIngest(r: AppendRun): Promise<void> {
  const lap = lapper(r.timings);
  const source = await readNewRows(r);
  const { first, lastPriceDate } = await checkNewRows(r);
  lap("read");
  // Companies as a full run makes them: ids kept, market caps from each stock's last close.
  appendProgress(r, "companies and tables", 1);
  const tickers = await appendCompanies(r);
  lap("companies");
  const files = await appendTables(r, lastPriceDate);
  lap("tables");
  appendProgress(r, "returns and backtests", 2);
  const { returns, written } = await startReturns(r, lastPriceDate);
  lap("returns");
  let resumed: Awaited<ReturnType<typeof continueBenchmarks>>;
  try {
    resumed = await continueBenchmarks(r, source, first);
  } catch (e) {
    await written.catch(() => undefined);
    throw e;
  }
  await written;
  lap("benchmarks");
  // the new closes reach forward dates the published evidence lacked (the flow runs this stage too)
  await writeRatingEvidence(r.ctx);
  lap("evidence");
  const { conn } = r.ctx;
  const newDays = Number(await one(conn, `select count(distinct date)::integer from new_prices`));
  const newRatings = r.grown.has("ratings") ? Number(await one(conn, `select count(*)::integer from new_ratings`)) : 0;
  const record: AppendRecord = {
    base: r.base,
    baseLastPriceDate: r.baseMeta.lastPriceDate,
    lastPriceDate,
    ...files,
    tailRatingDate: resumed.tailRatingDate,
    returns,
    definitions: resumed.defs,
    users: r.users,
    counts: {
      companies: tickers.length,
      priceDates: (r.baseMeta.counts.priceDates ?? 0) + newDays,
      ratings: (r.baseMeta.counts.ratings ?? 0) + newRatings,
      // the backtests continue each portfolio defined now (append-backtests.ts tailBacktests)
      portfolios: new Set([...resumed.defs.portfolios, ...r.users].map((p) => p.id)).size,
      benchmarks: resumed.benchmarks,
    },
    newDays,
  };
  const layout = stagingLayout(r.ctx.out);
  mkdirSync(layout.flowDir, { recursive: true });
  writeStagingRecord("append", layout.append, record, true);
}

/** The new rows, validated as a small source of their own. */
async function readNewRows(r: AppendRun): Promise<StagedSource> {
  if (!r.published.some((f) => /^ratings(\.|\/)/.test(f.path)))
    throw new NotAnAppendError("the published ratings were computed by the factor model (the source has none)");
  const delta = `${r.ctx.out}.delta`;
  try {
    appendProgress(r, "reading the new rows", 0);
    await writeDeltaSource(r.sourceDir, r.published, r.plan, delta);
    const source = await stageSource(r.ctx.conn, delta, { partial: true });
    if (source.rejectCount > 0) throw new NotAnAppendError(`the new rows have ${source.rejectCount} problem(s)`);
    return source;
  } finally {
    rmSync(delta, { recursive: true, force: true });
  }
}

/** Views cannot bind values: the published files are session variables of each connection that reads the views. */
async function publishedFiles(c: Conn, base: string): Promise<void> {
  await setVariable([c], "pub_prices_files", listValue(datedFiles(base, "prices")));
  await setVariable([c], "pub_ratings_files", listValue(datedFiles(base, "ratings")));
  await setVariable([c], "pub_benchmark_source_file", join(base, "benchmark_source.parquet"));
}

/** The new rows must come after everything published, or they are a backfill, not an append. */
async function checkNewRows({ ctx: { conn }, base, baseMeta, grown }: AppendRun) {
  const baseLastDate = baseMeta.lastPriceDate;
  await conn.run(`alter table prices rename to new_prices`);
  const first = await one(conn, `select strftime(min(date), '%Y-%m-%d') from new_prices`);
  if (first == null || String(first) <= baseLastDate)
    throw new NotAnAppendError(`the new prices start on ${first}, not after the published ${baseLastDate}`);
  const lastPriceDate = String(await one(conn, `select strftime(max(date), '%Y-%m-%d') from new_prices`));
  await publishedFiles(conn, base);
  await conn.run(
    "create view pub_prices as select * from read_parquet(getvariable('pub_prices_files'), union_by_name = true)",
  );
  await conn.run(
    "create view pub_ratings as select * from read_parquet(getvariable('pub_ratings_files'), union_by_name = true)",
  );
  if (grown.has("ratings")) {
    await conn.run(`alter table ratings rename to new_ratings`);
    const after = await one(
      conn,
      `select count(*)::integer from new_ratings where date <= (select max(date) from pub_ratings)`,
    );
    if (Number(after) > 0) throw new NotAnAppendError("new ratings are dated on or before the published ones");
  }
  if (grown.has("benchmarks")) {
    const b = new Binds();
    const after = await scalar(
      conn,
      `select count(*)::integer from benchmarks b join (select benchmark, max(date) d ` +
        `from ${pubRel(base)("benchmark_source", b)} group by 1) p using (benchmark) where b.date <= p.d`,
      b.params,
    );
    if (Number(after) > 0) throw new NotAnAppendError("new index levels are dated on or before the published ones");
  }
  return { first: String(first), lastPriceDate };
}

/** companies.parquet as a full run writes it; the published financial tables reused. */
async function appendCompanies(r: AppendRun): Promise<string[]> {
  const { ctx, base } = r;
  const { conn, out } = ctx;
  await conn.run(`create view prices as select * from pub_prices union all by name select * from new_prices`);
  // The published last prices, those of the stocks with new days replaced: no scan of the history.
  const lastPub = join(base, "last_prices.parquet");
  if (existsSync(lastPub))
    await conn.run(
      `create temp table last_prices as
      select ticker, date, "close", price from read_parquet($f) where ticker not in (select ticker from new_prices)
      union all ${LAST_PRICES_SQL("new_prices")}`,
      { f: lastPub },
    );
  await companiesWithIds(ctx, { lastPrices: existsSync(lastPub) });
  await exportParquet(conn, "companies", out, [], "ticker");
  const [tickers = []] = (await columns(conn, `select upper(ticker) from companies order by 1`)) as [string[]];
  if (!reusePublished(ctx, await fundamentalsInputId(join(r.sourceDir, "fundamentals"), tickers)))
    throw new NotAnAppendError("the financial tables cannot be reused");
  return tickers;
}

/**
 * Prices and ratings: the published parts linked, the new days a file of their own (returned: the
 * backtest step reads them); the index levels.
 */
async function appendTables(
  { ctx: { conn, out }, base, grown }: AppendRun,
  lastPriceDate: string,
): Promise<Pick<AppendRecord, "newPrices" | "newRatings">> {
  linkDated(base, out, "prices");
  const newPrices = nextDaysFile(out, "prices", lastPriceDate);
  await conn.run("copy (select * from new_prices order by ticker, date) to $f (format parquet, compression zstd)", {
    f: newPrices,
  });
  linkDated(base, out, "ratings");
  let newRatings: string | null = null;
  if (grown.has("ratings")) {
    const last = String(await one(conn, `select strftime(max(date), '%Y-%m-%d') from new_ratings`));
    newRatings = nextDaysFile(out, "ratings", last);
    await conn.run("copy (select * from new_ratings order by date, ticker) to $f (format parquet, compression zstd)", {
      f: newRatings,
    });
  }
  const hasIndex = existsSync(join(base, "benchmark_source.parquet"));
  const pubBenchmarks = hasIndex
    ? "select * from read_parquet(getvariable('pub_benchmark_source_file'))"
    : `select null::varchar benchmark, null::date date, null::double "close" where false`;
  const newBenchmarks = grown.has("benchmarks") ? " union all by name select * from benchmarks" : "";
  await conn.run(`create view benchmark_all as ${pubBenchmarks}${newBenchmarks}`);
  if (hasIndex) {
    await conn.run(`create or replace view benchmark_source as select * from benchmark_all`);
    await exportParquet(conn, "benchmark_source", out, [], "benchmark, date");
  }
  return { newPrices, newRatings };
}

/**
 * Returns of the new days: each from the stock's last published price (returns.ts's formula). The
 * published parts are linked as they are; the new days join the earlier appended ones in the one
 * file of appended days beside them. Written on a connection of its own while this one continues
 * the backtests (both before the metrics): `written`, awaited also on a failure (it reads this database).
 */
async function startReturns(r: AppendRun, lastPriceDate: string) {
  const { ctx, base } = r;
  const { conn, out } = ctx;
  const pubReturns = await publishedReturns(conn, base);
  const parts = pubReturns.parts.map((f) => join(out, RETURNS_PARTS, basename(f)));
  mkdirSync(join(out, RETURNS_PARTS), { recursive: true });
  pubReturns.parts.forEach((f, k) => {
    linkSync(f, parts[k]);
  });
  const daysFile = returnsDaysFile(out, lastPriceDate);
  const returnsConn = ctx.connect ? await ctx.connect() : conn;
  if (returnsConn !== conn) await publishedFiles(returnsConn, base);
  const written = writeNewReturns(returnsConn, r, pubReturns.days, daysFile);
  written.catch(() => undefined); // awaited by the caller, also on a failure
  if (returnsConn === conn) await written;
  return { returns: { parts, days: daysFile, ranges: pubReturns.ranges }, written };
}

/** The appended days' returns file: the earlier appended days', then the new ones. */
function writeNewReturns(c: Conn, r: AppendRun, pubDays: string | null, daysFile: string): Promise<unknown> {
  const lastPub = join(r.base, "last_prices.parquet");
  const rb = new Binds();
  return runSql(
    c,
    `copy (
      select * from (
        ${pubDays ? `select id, date, ret from read_parquet(${rb.v(pubDays)}) union all` : ""}
        select id, date, ret from (
          select ticker as id, date, coalesce(p / lag(p) over (partition by ticker order by date) - 1, 0) as ret
          from (
            select ticker, date, price as p
            from ${existsSync(lastPub) ? `read_parquet(${rb.v(lastPub)})` : `(${LAST_PRICES_SQL("pub_prices")})`}
            where ticker in (select ticker from new_prices)
            union all select ticker, date, coalesce(adj_close, "close")::double from new_prices
          )
        ) where date > ${rb.v(r.baseMeta.lastPriceDate)}::date
      ) order by id, date
    ) to ${rb.v(daysFile)} (format parquet, compression zstd, row_group_size ${RETURNS_ROW_GROUP})`,
    rb.params,
  );
}

/**
 * The benchmarks continued over the new days (every metric table is computed against them), and what
 * the backtest step needs to continue the portfolios: the definitions and the rating date that applies.
 */
async function continueBenchmarks(r: AppendRun, source: StagedSource, first: string) {
  const { ctx, base, grown } = r;
  const conn = ctx.conn;
  const lastRatingDate = await scalar(conn, "select max(date)::varchar from pub_ratings where date <= $d::date", {
    d: first,
  });
  // a view cannot bind values: the date is a session variable (null: no published rating date applies)
  await setVariable([conn], "tail_rating_date", lastRatingDate == null ? null : String(lastRatingDate));
  await conn.run(`create view ratings_tail as
    select * from pub_ratings where date = getvariable('tail_rating_date')::date
    ${grown.has("ratings") ? "union all by name select * from new_ratings" : ""}`);
  // portfolios.json is byte-identical to the published run's (else this is no append).
  const defs = source.portfoliosGiven ? source.portfolios : await publishedDefinitions(conn, base);
  const tail = await tailBacktests(conn, pubRel(base), defs, r.users);
  const bench = await tail.benchmarks();
  await writeBenchmarkTables(ctx, bench.benchmarks, bench.states);
  return {
    defs,
    tailRatingDate: lastRatingDate == null ? null : String(lastRatingDate),
    benchmarks: bench.benchmarks.length,
  };
}
