// The run's steps (pipeline/run/plan.ts declares them), which talk only through files in the staging
// folder, so each step may run in another process on another machine that mounts the same store:
// ingest (source tables, ratings, benchmarks and the plan), the partitions (stock returns and metrics
// per ticker range, one backtest per portfolio), and the merge that turns the partition outputs into
// the snapshot's tables. Both executors run them: the BullMQ flow one job per step and partition, the
// in-process runner (jobs/local/runner.ts) in one process, its backtests in one batch (backtestsInline).
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { buildUniverse, type Universe } from "../portfolios/index.ts";
import type { StagedSource } from "../sources/index.ts";
import type { UserPortfolio } from "../store/catalog/types.ts";
import { type Conn, columns, listValue, openDuck, setVariable } from "../store/duck/duck.ts";
import { DUCK_MEMORY } from "../store/duck/duck-memory.ts";
import { withScratch } from "../store/duck/scratch.ts";
import { appendTable, type Cell, exportParquet, exportParquetFile } from "../store/duck/write.ts";
import { METRIC_COLS, METRIC_ORDER } from "../store/snapshot/metric-tables.ts";
import { readStagingRecord, stagingLayout, writeStagingRecord } from "../store/snapshot/staging-layout.ts";
import type { LevelSeries, PortfolioRules } from "../types.ts";
import { writePortfolioMetrics } from "./analytics.ts";
import type { StageContext } from "./context.ts";
import { computedRatingsStage, loadFrames, loadIndexSeries, loadMarketFrames, type MarketFrames } from "./frames.ts";
import { ingestStage } from "./ingest.ts";
import { benchmarkLevels, type LevelsCache, subjectMetricRows } from "./metrics-partition.ts";
import { partFile, sortedKeys, type TickerRange, tickerRanges } from "./partitions.ts";
import {
  benchmarksStage,
  computeBenchmarks,
  exportPortfolioTables,
  indexBenchmarksOnly,
  runBacktests,
  stagePortfolioTables,
  writeBenchmarkTables,
  writePortfolioTables,
} from "./portfolios.ts";

const PORTFOLIO_TABLES = [
  "portfolios",
  "holdings",
  "portfolio_returns",
  "portfolio_turnover",
  "portfolio_state",
  "portfolio_metrics",
] as const;

/**
 * Where the universe of a run (its price panel, ratings and universe: GBs at 5,000 × 25) is kept
 * between the steps a process takes: the executor's host owns one (pipeline/run/universe-cache.ts)
 * and hands it to the steps that build or read it; the steps keep no state of their own.
 */
export interface UniverseHolder {
  /** The run's universe, built here: kept for the backtests this process takes. */
  keep(out: string, universe: Promise<Universe>): void;
  /** The run's universe held here, else the one `load` reads (kept until it fails). */
  get(out: string, load: () => Promise<Universe>): Promise<Universe>;
  /** A backtest of the run is done here: let the universe go once it can serve no more. */
  release(out: string): void;
  /** Let it go now (the backtests are done with it, or the run failed). */
  forget(): void;
}

/** What the executor's host keeps between the steps it runs of a run, and hands to them. */
export interface StepState {
  universes: UniverseHolder;
  /** The benchmark levels a backtest or stock metric partition reads. */
  levels: LevelsCache;
}

type PortfolioEntry = { rules: PortfolioRules; ownerId: string | null; createdAt: string | null };

/** What ingest leaves for the later steps (plain JSON in the staging folder). */
export interface FlowPlan {
  counts: { companies: number; priceDates: number; ratings: number; benchmarks: number };
  lastPriceDate: string;
  /** Stock metric partitions (ticker ranges of the prices). */
  ranges: TickerRange[];
  /** Portfolio ids in the order the in-process runner backtests them. */
  portfolioIds: string[];
  portfolios: PortfolioEntry[];
}

/** A run plan's counts as meta.json has them (the portfolios: each id once). */
export function planCounts(plan: FlowPlan): Record<string, number> {
  return {
    companies: plan.counts.companies,
    priceDates: plan.counts.priceDates,
    ratings: plan.counts.ratings,
    portfolios: plan.portfolioIds.length,
    benchmarks: plan.counts.benchmarks,
  };
}

export function readPlan(out: string): FlowPlan {
  const plan = readStagingRecord("plan", stagingLayout(out).plan);
  if (!plan)
    throw new Error(
      `the run's staging folder ${out} has no plan: it was removed (pruned after every worker of the run stopped) or ` +
        `ingest never finished; run the command again`,
    );
  return plan;
}

/** How the ingest step runs under each executor (pipeline/run/plan.ts). */
export interface IngestStepOptions {
  /**
   * Called with the stock metric ranges as soon as their inputs (prices.parquet once `written`, and
   * the benchmark tables) are in `ctx.out`: when every benchmark is an index series, once the source is
   * clean, before the company ids and the plan; else just before the plan is written. Awaited.
   */
  analytics?: (ranges: TickerRange[], written: Promise<void>) => Promise<void>;
  /** A backfill's merge of the published history outside its window (ingest.ts). */
  merge?: (s: StagedSource) => Promise<void>;
  /** The fundamentals in this step too (the inline executor); in the flow they are steps of their own. */
  financials?: boolean;
  /** Build the universe the backtests read in this process, even when nothing else here needs the price panel. */
  universe?: boolean;
  /** A cancelled job's: the step stops once the source is staged, before the price panel is read. */
  signal?: AbortSignal;
  /** Where the universe built here is kept for this process's backtests (none: not kept). */
  universes?: UniverseHolder;
}

type Started = { ranges: TickerRange[]; benchmarks: number };

/**
 * Step 1: everything the partitions read (the fundamentals aside, unless `opts.financials`), written
 * to `ctx.out`; returns the plan (also written to the staging folder).
 */
export async function flowIngestStep(
  ctx: StageContext,
  sourceDir: string,
  users: UserPortfolio[],
  opts: IngestStepOptions = {},
): Promise<FlowPlan> {
  ctx.progress?.("ingest: reading and validating the source", 0, 1);
  const early = earlyStart(ctx, opts);
  let staged: Awaited<ReturnType<typeof ingestStage>>;
  try {
    staged = await ingestStage(ctx, sourceDir, opts.merge, {
      financials: opts.financials ?? false,
      clean: early.clean,
    });
    await staged.written;
  } catch (e) {
    await early.market?.catch(() => undefined); // it reads the database the caller closes
    throw e;
  }
  opts.signal?.throwIfAborted();
  const { source } = staged;
  const portfolios: PortfolioEntry[] = [
    ...source.portfolios.portfolios.map((rules) => ({ rules, ownerId: null, createdAt: null })),
    ...users.map(({ ownerId, createdAt, ...rules }) => ({ rules, ownerId, createdAt })),
  ];
  // A later definition of the same id replaces the earlier one, as in a Map.
  const portfolioIds = [...new Map(portfolios.map((p) => [p.rules.id, p])).keys()];
  const started = early.started;
  // Nothing left that needs the price panel in this step: the backtests load their universe themselves.
  const plan: FlowPlan = {
    ...(started && source.tables.has("ratings") && !opts.universe
      ? await countedPlan(ctx, started)
      : await framesPlan(ctx, source, early.market, started, opts)),
    portfolioIds,
    portfolios,
  };
  mkdirSync(stagingLayout(ctx.out).flowDir, { recursive: true });
  writeStagingRecord("plan", stagingLayout(ctx.out).plan, plan);
  return plan;
}

/**
 * The ingest's hook on the clean source: the price panel read on a connection of its own (when this
 * step needs it) while the source tables are written and the company ids assigned; with index
 * benchmarks only, the benchmark tables written and the stock metrics started at once.
 */
function earlyStart(ctx: StageContext, opts: IngestStepOptions) {
  const state: { market?: Promise<MarketFrames>; started: Started | null } = { started: null };
  const clean = async (s: StagedSource, written: Promise<void>) => {
    const has = {
      ratings: s.tables.has("ratings"),
      benchmarks: s.tables.has("benchmarks"),
      keyOrdered: s.keyOrdered?.has("prices"),
    };
    if (ctx.connect && (opts.universe || !(indexBenchmarksOnly(s.portfolios) && has.ratings))) {
      state.market = loadMarketFrames(await ctx.connect(), has);
      state.market.catch(() => undefined); // awaited by the step
    }
    if (!indexBenchmarksOnly(s.portfolios)) return;
    const indexSeries = has.benchmarks ? await loadIndexSeries(ctx.conn) : new Map<string, LevelSeries>();
    const benchmarks = await benchmarksStage(ctx, { indexSeries }, null, s.portfolios);
    const keys = await sortedKeys(ctx.conn, "prices", "ticker");
    const ranges = tickerRanges(keys, ctx.tickersPerPartition, ctx.parallelism);
    state.started = { ranges, benchmarks: benchmarks.length };
    await opts.analytics?.(ranges, written);
  };
  return {
    clean,
    get market() {
      return state.market;
    },
    get started() {
      return state.started;
    },
  };
}

/** The plan's counts from the staged tables (no price panel read). */
async function countedPlan(ctx: StageContext, started: Started) {
  ctx.progress?.("plan", 0, 1);
  const [[companies], [priceDates, last], [ratings]] = await Promise.all([
    columns(ctx.conn, "select count(*)::integer from companies"),
    columns(ctx.conn, "select count(distinct date)::integer, strftime(max(date), '%Y-%m-%d') from prices"),
    columns(ctx.conn, "select count(*)::integer from ratings"),
  ]);
  return {
    counts: {
      companies: Number(companies[0]),
      priceDates: Number(priceDates[0]),
      ratings: Number(ratings[0]),
      benchmarks: started.benchmarks,
    },
    lastPriceDate: (last[0] as string | null) ?? "",
    ranges: started.ranges,
  };
}

/**
 * The price panel read: ratings computed when the source has none, the universe built (kept for the
 * backtests this process takes), the benchmarks written unless they were at the clean source.
 */
async function framesPlan(
  ctx: StageContext,
  source: StagedSource,
  market: Promise<MarketFrames> | undefined,
  started: Started | null,
  opts: IngestStepOptions,
) {
  ctx.progress?.("frames", 0, 1);
  const frames = await loadFrames(
    ctx.conn,
    { ratings: source.tables.has("ratings"), benchmarks: source.tables.has("benchmarks") },
    market && (await market),
  );
  if (!source.tables.has("ratings")) await computedRatingsStage(ctx, frames, source.dir);
  let benchmarks = started?.benchmarks;
  if (benchmarks === undefined || opts.universe) {
    const universe = buildUniverse(frames.panel, frames.companies, frames.ratings);
    // The staged tables' universe, as a backtest job would load it: kept for the backtests this process takes.
    opts.universes?.keep(ctx.out, Promise.resolve(universe));
    if (benchmarks === undefined) {
      // Benchmarks first: every stock and portfolio metric table is computed against them.
      const { benchmarks: list, states } = computeBenchmarks(frames, universe, source.portfolios);
      await writeBenchmarkTables(ctx, list, states);
      benchmarks = list.length;
    }
  }
  // the panel's tickers are the prices' distinct tickers in order: no second pass over 32 M rows
  const ranges = started?.ranges ?? tickerRanges(frames.panel.tickers, ctx.tickersPerPartition, ctx.parallelism);
  if (!started) await opts.analytics?.(ranges, Promise.resolve());
  return {
    counts: {
      companies: frames.companies.length,
      priceDates: frames.panel.dates.length,
      ratings: frames.ratings.length,
      benchmarks,
    },
    lastPriceDate: frames.panel.dates.at(-1) ?? "",
    ranges,
  };
}

/** What a stock metric partition reads is staged (else: a clear message, not a DuckDB file error). */
export function requireAnalyticsInputs(out: string): void {
  for (const f of ["prices.parquet", "benchmark_levels.parquet", "benchmark_defs.parquet"])
    if (!existsSync(join(out, f)))
      throw new Error(
        `the run's staging folder ${out} has no ${f}: it was removed (pruned after every worker of the run stopped) ` +
          `or ingest never staged it; run the command again`,
      );
}

/**
 * Partitions whose output is whole in `out` (files are renamed into place): a re-added child that finished is not run
 * twice.
 */
export const analyticsDone = (out: string, r: TickerRange) => existsSync(join(out, "stock_metrics", partFile(r.part)));
export const backtestDone = (out: string, id: string) =>
  existsSync(join(partDir(out, id), "portfolio_metrics.parquet"));

/** The run's universe read from its staged tables, as a backtest job loads it. */
async function stagedUniverse(out: string): Promise<Universe> {
  const db = await openDuck(":memory:", { threads: "1", memory_limit: DUCK_MEMORY.flowStep });
  try {
    // views cannot bind values: each reads its file from a session variable (duck.ts, setVariable)
    for (const t of ["companies", "prices", "ratings"])
      await setVariable([db.conn], `${t}_file`, join(out, `${t}.parquet`));
    await db.conn.run("create view companies as select * from read_parquet(getvariable('companies_file'))");
    await db.conn.run("create view prices as select * from read_parquet(getvariable('prices_file'))");
    await db.conn.run("create view ratings as select * from read_parquet(getvariable('ratings_file'))");
    const frames = await loadFrames(db.conn, { ratings: true, benchmarks: false });
    return buildUniverse(frames.panel, frames.companies, frames.ratings);
  } finally {
    db.close();
  }
}

const partDir = (out: string, id: string) => join(stagingLayout(out).portfolioParts, encodeURIComponent(id));

/** Step 2b: one portfolio's backtest and metric tables, as Parquet parts (dates still text). */
export async function flowBacktestStep(out: string, portfolioId: string, host: StepState): Promise<void> {
  const { universes } = host;
  const plan = readPlan(out);
  const entry = lastEntry(plan, portfolioId);
  if (!entry) throw new Error(`portfolio ${portfolioId} is not in the run's plan`);
  const done = runBacktests(await universes.get(out, () => stagedUniverse(out)), [entry]).get(portfolioId)!;
  await withScratch(async (conn) => {
    await stagePortfolioTables(conn, [{ result: done.result, rebalances: done.bt.rebalances, state: done.bt.state }]);
    const benchmarks = await benchmarkLevels(conn, out, host.levels);
    await appendTable(
      conn,
      "portfolio_metrics",
      METRIC_COLS,
      subjectMetricRows(portfolioId, done.result.returns, benchmarks) as Iterable<Cell[]>,
    );
    const dir = partDir(out, portfolioId);
    for (const t of PORTFOLIO_TABLES) await exportParquetFile(conn, t, join(dir, `${t}.parquet`));
  });
  universes.release(out);
}

/**
 * Step 2b for every portfolio at once, in this process (the inline executor): the backtests on the
 * universe ingest built, their tables and metric rows written into the snapshot directly (what the
 * flow's per-portfolio parts and merge write, so the merge step finds its record), then the universe let go.
 */
export async function backtestsInline(
  ctx: StageContext,
  universes: UniverseHolder,
  plan: FlowPlan = readPlan(ctx.out),
): Promise<void> {
  ctx.progress?.("portfolios", 0, plan.portfolioIds.length);
  const entries = plan.portfolioIds.map((id) => lastEntry(plan, id)!);
  const done = runBacktests(await universes.get(ctx.out, () => stagedUniverse(ctx.out)), entries);
  universes.forget(); // the panel, ratings and universe are done with: GBs at 5,000 × 25
  ctx.progress?.("portfolios", done.size, entries.length);
  await writePortfolioTables(
    ctx,
    [...done.values()].map((d) => ({ result: d.result, rebalances: d.bt.rebalances, state: d.bt.state })),
  );
  ctx.log.info({ portfolios: done.size }, "portfolios backtested");
  const benchmarks = await benchmarkLevels(ctx.conn, ctx.out);
  await writePortfolioMetrics(
    ctx,
    [...done].map(([id, d]) => [id, d.result]),
    benchmarks,
  );
  writeStagingRecord("merged", stagingLayout(ctx.out).merged, {});
}

/** The last definition of an id wins, as in a Map. */
const lastEntry = (plan: FlowPlan, id: string) => [...plan.portfolios].reverse().find((p) => p.rules.id === id);

/**
 * Step 3: the portfolio parts merged into the snapshot's tables, the parts and the fundamentals'
 * slices removed. Done once: a publish retried after it (the publish failed) finds it done. The
 * plan and the run's records stay in `.flow` until the publish sets them aside (RunLifecycle.publish,
 * pipeline/run/lifecycle.ts).
 */
export async function flowMergeStep(out: string): Promise<FlowPlan> {
  const plan = readPlan(out);
  if (readStagingRecord("merged", stagingLayout(out).merged)) return plan;
  const db = await openDuck(":memory:", { threads: "1", memory_limit: DUCK_MEMORY.flowStep });
  try {
    const conn: Conn = db.conn;
    const parts = plan.portfolioIds.map((id) => partDir(out, id));
    const missing = parts.filter((d) => !existsSync(join(d, "portfolio_metrics.parquet")));
    if (missing.length) throw new Error(`${missing.length} portfolio backtest(s) left no output in ${out}`);
    if (parts.length) {
      for (const t of PORTFOLIO_TABLES) {
        const files = listValue(parts.map((d) => join(d, `${t}.parquet`)));
        await conn.run(`create table ${t} as select * from read_parquet($files::varchar[])`, { files });
      }
    } else {
      await stagePortfolioTables(conn, []);
      await appendTable(conn, "portfolio_metrics", METRIC_COLS, []);
    }
    await exportPortfolioTables(conn, out);
    await exportParquet(conn, "portfolio_metrics", out, [], METRIC_ORDER);
  } finally {
    db.close();
  }
  writeStagingRecord("merged", stagingLayout(out).merged, {});
  rmSync(stagingLayout(out).portfolioParts, { recursive: true, force: true });
  rmSync(stagingLayout(out).fundamentalsSplit, { recursive: true, force: true });
  return plan;
}
