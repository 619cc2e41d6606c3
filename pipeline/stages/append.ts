// The nightly append: a source that only added trading days to the one the published snapshot
// was built from (append-plan.ts) is not read again. Its new rows are validated as a small
// source of their own; the published prices and ratings are hard-linked and the new days added
// as files of their own (dated-parts.ts); returns are computed for the new days only, from each
// stock's last published price, and kept beside the published parts (returns.ts); the backtests
// continue from their recorded states. Every stock's full-period metric tables do change with a
// new day, so those are recomputed from the published returns plus the new ones, one partition
// job per published part.
import { existsSync, linkSync, mkdirSync, rmSync } from "node:fs";
import { basename, join } from "node:path";
import { type AppendPlan, writeDeltaSource } from "../sources/append-plan.ts";
import type { SourceFile } from "../sources/fingerprint.ts";
import { type StagedSource, stageSource } from "../sources/index.ts";
import type { UserPortfolio } from "../store/catalog/types.ts";
import { Binds, type Conn, columns, listValue, run as runSql, scalar, setVariable } from "../store/duck/duck.ts";
import { exportParquet } from "../store/duck/write.ts";
import { datedFiles, linkDated, nextDaysFile } from "../store/snapshot/dated-parts.ts";
import type { SnapshotMeta } from "../store/snapshot/snapshots.ts";
import { writePortfolioMetrics } from "./analytics.ts";
import { NotAnAppendError, tailBacktests } from "./append-backtests.ts";
import { publishedDefinitions } from "./backfill.ts";
import type { StageContext } from "./context.ts";
import { companiesWithIds, fundamentalsInputId, LAST_PRICES_SQL, reusePublished } from "./ingest.ts";
import type { MetricsJob } from "./metrics-partition.ts";
import { type PartitionJob, runPartitionsInline } from "./partition-jobs.ts";
import { rangesFromBounds } from "./partitions.ts";
import { exportPortfolioTables, stagePortfolioTables, writeBenchmarkTables } from "./portfolios.ts";
import { RETURNS_PARTS, RETURNS_ROW_GROUP, returnsDaysFile, returnsFiles } from "./returns.ts";

export { NotAnAppendError } from "./append-backtests.ts";

export interface AppendResult {
  lastPriceDate: string;
  counts: Record<string, number>;
  /** Milliseconds per step: read (the new rows), companies, tables, returns, benchmarks, portfolios, metrics. */
  timings: Record<string, number>;
}

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
 * Builds the snapshot of `plan` in `ctx.out` from the snapshot in `base` and the new rows.
 * Throws NotAnAppendError when the new rows do not simply continue the published history.
 */
export async function appendStage(
  ctx: StageContext,
  sourceDir: string,
  base: string,
  baseMeta: Pick<SnapshotMeta, "lastPriceDate" | "counts">,
  published: SourceFile[],
  plan: Extract<AppendPlan, { kind: "append" }>,
  users: UserPortfolio[],
): Promise<AppendResult> {
  const baseLastDate = baseMeta.lastPriceDate;
  const timings: Record<string, number> = {};
  let t = performance.now();
  const lap = (name: string) => {
    const now = performance.now();
    timings[name] = Math.round(now - t);
    t = now;
  };
  const { conn, out } = ctx;
  const step = (name: string, done: number, total: number) => ctx.progress?.(`append: ${name}`, done, total);
  const pub = (t: string, b: Binds) => `read_parquet(${b.v(join(base, `${t}.parquet`))})`;
  // views cannot bind values: the published files are session variables of each connection that reads the views
  const pubFiles = async (c: Conn) => {
    await setVariable([c], "pub_prices_files", listValue(datedFiles(base, "prices")));
    await setVariable([c], "pub_ratings_files", listValue(datedFiles(base, "ratings")));
    await setVariable([c], "pub_benchmark_source_file", join(base, "benchmark_source.parquet"));
  };
  if (!published.some((f) => /^ratings(\.|\/)/.test(f.path)))
    throw new NotAnAppendError("the published ratings were computed from prices (the source has none)");
  const delta = `${out}.delta`;
  let source: StagedSource;
  try {
    step("reading the new rows", 0, 4);
    await writeDeltaSource(sourceDir, published, plan, delta);
    source = await stageSource(conn, delta, { partial: true });
    if (source.rejectCount > 0) throw new NotAnAppendError(`the new rows have ${source.rejectCount} problem(s)`);
  } finally {
    rmSync(delta, { recursive: true, force: true });
  }
  const grown = new Set(plan.grown);
  // The new rows must come after everything published, or they are a backfill, not an append.
  await conn.run(`alter table prices rename to new_prices`);
  const first = await one(conn, `select strftime(min(date), '%Y-%m-%d') from new_prices`);
  if (first == null || String(first) <= baseLastDate)
    throw new NotAnAppendError(`the new prices start on ${first}, not after the published ${baseLastDate}`);
  const lastPriceDate = String(await one(conn, `select strftime(max(date), '%Y-%m-%d') from new_prices`));
  await pubFiles(conn);
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
        `from ${pub("benchmark_source", b)} group by 1) p using (benchmark) where b.date <= p.d`,
      b.params,
    );
    if (Number(after) > 0) throw new NotAnAppendError("new index levels are dated on or before the published ones");
  }

  lap("read");
  // Companies as a full run makes them: ids kept, market caps from each stock's last close.
  step("companies and tables", 1, 4);
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
  if (!reusePublished(ctx, await fundamentalsInputId(join(sourceDir, "fundamentals"), tickers)))
    throw new NotAnAppendError("the financial tables cannot be reused");

  lap("companies");
  linkDated(base, out, "prices");
  await conn.run("copy (select * from new_prices order by ticker, date) to $f (format parquet, compression zstd)", {
    f: nextDaysFile(out, "prices", lastPriceDate),
  });
  linkDated(base, out, "ratings");
  if (grown.has("ratings")) {
    const last = String(await one(conn, `select strftime(max(date), '%Y-%m-%d') from new_ratings`));
    await conn.run("copy (select * from new_ratings order by date, ticker) to $f (format parquet, compression zstd)", {
      f: nextDaysFile(out, "ratings", last),
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

  lap("tables");
  // Returns of the new days: each from the stock's last published price (returns.ts's formula).
  // The published parts are linked as they are; the new days join the earlier appended ones in
  // the one file of appended days beside them.
  step("returns and backtests", 2, 4);
  const pubReturns = await publishedReturns(conn, base);
  const parts = pubReturns.parts.map((f) => join(out, RETURNS_PARTS, basename(f)));
  mkdirSync(join(out, RETURNS_PARTS), { recursive: true });
  pubReturns.parts.forEach((f, k) => {
    linkSync(f, parts[k]);
  });
  const daysFile = returnsDaysFile(out, lastPriceDate);
  // Written on a connection of its own while this one continues the backtests (both before the metrics).
  const returnsConn = ctx.connect ? await ctx.connect() : conn;
  if (returnsConn !== conn) await pubFiles(returnsConn);
  const rb = new Binds();
  const returnsWritten = runSql(
    returnsConn,
    `copy (
      select * from (
        ${pubReturns.days ? `select id, date, ret from read_parquet(${rb.v(pubReturns.days)}) union all` : ""}
        select id, date, ret from (
          select ticker as id, date, coalesce(p / lag(p) over (partition by ticker order by date) - 1, 0) as ret
          from (
            select ticker, date, price as p
            from ${existsSync(lastPub) ? `read_parquet(${rb.v(lastPub)})` : `(${LAST_PRICES_SQL("pub_prices")})`}
            where ticker in (select ticker from new_prices)
            union all select ticker, date, coalesce(adj_close, "close")::double from new_prices
          )
        ) where date > ${rb.v(baseLastDate)}::date
      ) order by id, date
    ) to ${rb.v(daysFile)} (format parquet, compression zstd, row_group_size ${RETURNS_ROW_GROUP})`,
    rb.params,
  );
  returnsWritten.catch(() => undefined); // awaited below, also on a failure (it reads this database)
  if (returnsConn === conn) await returnsWritten;
  lap("returns");
  let tail: Awaited<ReturnType<typeof tailBacktests>>;
  let bench: Awaited<ReturnType<typeof tail.benchmarks>>;
  try {
    // The backtests continue over the new days; the benchmarks first (every metric table is computed against them).
    const lastRatingDate = await scalar(conn, "select max(date)::varchar from pub_ratings where date <= $d::date", {
      d: String(first),
    });
    // a view cannot bind values: the date is a session variable (null: no published rating date applies)
    await setVariable([conn], "tail_rating_date", lastRatingDate == null ? null : String(lastRatingDate));
    await conn.run(`create view ratings_tail as
      select * from pub_ratings where date = getvariable('tail_rating_date')::date
      ${grown.has("ratings") ? "union all by name select * from new_ratings" : ""}`);
    // portfolios.json is byte-identical to the published run's (else this is no append).
    const defs = source.portfoliosGiven ? source.portfolios : await publishedDefinitions(conn, base);
    tail = await tailBacktests(conn, pub, defs, users);
    bench = await tail.benchmarks();
    await writeBenchmarkTables(ctx, bench.benchmarks, bench.states);
  } catch (e) {
    await returnsWritten.catch(() => undefined);
    throw e;
  }
  await returnsWritten;

  lap("benchmarks");
  const t0 = performance.now();
  const jobs: PartitionJob[] = pubReturns.ranges.map((range, k) => ({
    stage: "metrics",
    data: { out, range, returns: [parts[k], daysFile] } satisfies MetricsJob,
  }));
  const run = ctx.runPartitions ?? runPartitionsInline;
  const stocks = run(jobs, (d) => ctx.progress?.("metrics", d, jobs.length));
  stocks.catch(() => undefined);
  let portfolioCount = 0;
  try {
    // Meanwhile, on this thread: the portfolios. Published rows of the ones still defined, then
    // the new days' rows.
    const resumed = await tail.portfolios();
    portfolioCount = resumed.portfolios.length;
    const ids = resumed.portfolios.map((p) => p.result.rules.id);
    await stagePortfolioTables(conn, resumed.portfolios, "_new");
    const text = (cols: string[]) => `* replace (${cols.map((c) => `cast(${c} as varchar) as ${c}`).join(", ")})`;
    await conn.run(`create table portfolios as select * from portfolios_new`);
    const hb = new Binds();
    await runSql(
      conn,
      `create table holdings as select ${text(["date"])} from ${pub("holdings", hb)} where kind = 'rebalance' and ` +
        `portfolio_id in (${hb.each(ids)}) union all by name select * from holdings_new`,
      hb.params,
    );
    const pb = new Binds();
    await runSql(
      conn,
      `create table portfolio_returns as select ${text(["date"])} from ${pub("portfolio_returns", pb)} where id in ` +
        `(${pb.each(ids)}) union all by name select * from portfolio_returns_new`,
      pb.params,
    );
    await conn.run(`create table portfolio_state as select * from portfolio_state_new`);
    await exportPortfolioTables(conn, out);
    await writePortfolioMetrics(
      ctx,
      [...resumed.returns].map(([id, returns]) => [id, { returns }] as [string, { returns: typeof returns }]),
      bench.benchmarks,
    );
    timings.portfolios = Math.round(performance.now() - t0);
    await stocks;
    timings.metrics = Math.round(performance.now() - t0);
  } catch (e) {
    await stocks.catch(() => undefined);
    throw e;
  }
  step("done", 4, 4);
  const newDays = Number(await one(conn, `select count(distinct date)::integer from new_prices`));
  const counts = {
    companies: tickers.length,
    priceDates: (baseMeta.counts.priceDates ?? 0) + newDays,
    ratings:
      (baseMeta.counts.ratings ?? 0) +
      (grown.has("ratings") ? Number(await one(conn, `select count(*)::integer from new_ratings`)) : 0),
    portfolios: portfolioCount,
    benchmarks: bench.benchmarks.length,
  };
  ctx.log.info({ newDays, partitions: jobs.length }, "analytics computed");
  return { lastPriceDate, counts, timings };
}
