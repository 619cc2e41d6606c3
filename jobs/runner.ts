// The in-process runner: composes the pipeline stages into one run that ends in an atomic
// publish, or in nothing at all. BullMQ workers call the same function.

import { rmSync } from "node:fs";
import { resolve } from "node:path";
import { buildUniverse, type Universe } from "../pipeline/portfolios/index.ts";
import { guessAppend, planAppend, writeSourceRecord } from "../pipeline/sources/append-plan.ts";
import { type SourceFiles, sourceFilesAsync } from "../pipeline/sources/fingerprint.ts";
import type { StagedSource } from "../pipeline/sources/index.ts";
import { startStockMetrics, writePortfolioMetrics } from "../pipeline/stages/analytics.ts";
import { appendStage, NotAnAppendError } from "../pipeline/stages/append.ts";
import { type DateWindow, mergeWindow } from "../pipeline/stages/backfill.ts";
import type { Log, StageContext } from "../pipeline/stages/context.ts";
import {
  computedRatingsStage,
  type Frames,
  loadFrames,
  loadIndexSeries,
  loadMarketFrames,
  type MarketFrames,
} from "../pipeline/stages/frames.ts";
import { ingestStage } from "../pipeline/stages/ingest.ts";
import type { PartitionJob } from "../pipeline/stages/partition-jobs.ts";
import { benchmarksStage, indexBenchmarksOnly, portfoliosStage } from "../pipeline/stages/portfolios.ts";
import type { Catalog } from "../pipeline/store/catalog/catalog.ts";
import { openStagingDuck } from "../pipeline/store/duck.ts";
import { takeLease } from "../pipeline/store/leases.ts";
import type { BenchmarkResult, PortfolioResult } from "../pipeline/store/model.ts";
import {
  discardStaging,
  isNoSpace,
  type Manifest,
  NoSpaceError,
  newSnapshotId,
  publishSnapshot,
  readManifest,
  readMeta,
  type SnapshotMeta,
  snapshotDir,
  stagingDir,
} from "../pipeline/store/snapshots.ts";
import { stagingLayout } from "../pipeline/store/staging-layout.ts";
import type { LevelSeries } from "../pipeline/types.ts";
import { serviceConfig } from "./config.ts";
import { defaultWorkers, PartitionPool } from "./partition-pool.ts";
import { publishedRecord } from "./published-record.ts";
import { reapplyMissedRebalances } from "./reapply.ts";

export interface RunOptions {
  dataDir: string;
  sourceDir: string;
  catalog: Catalog;
  log: Log;
  progress?: StageContext["progress"];
  /** Backfill: the source replaces only this window of the published history. */
  window?: DateWindow;
  /** The BullMQ job running this, recorded with the staging folder and the publish. */
  job?: string;
  /** Worker threads for partition jobs (0: inline); default `defaultWorkers()`. */
  workers?: number;
  /** Companies per partition job; default TICKERS_PER_PARTITION. */
  tickersPerPartition?: number;
  /** A cancelled job's (BullMQ's AbortSignal): the run stops at the next stage boundary, publishing nothing. */
  signal?: AbortSignal;
}

export interface RunResult {
  meta: SnapshotMeta;
  manifest: Manifest;
}

/** `PIPELINE_APPEND=0` turns the nightly append off: every run recomputes in full. */
export async function runPipeline(opts: RunOptions): Promise<RunResult> {
  // A source that only added days to the published one continues it (pipeline/stages/append.ts).
  const p = opts.window ? null : publishedRecord(opts.dataDir);
  if (!p) return fullRun(opts, sourceFilesAsync(opts.sourceDir));
  const { base: published, record } = p;
  // Hashing the source's bytes takes seconds at 5,000 × 25 (a nightly append's budget): it runs
  // while the append computes from what the files' sizes say, and decides before anything publishes.
  const verified = planAppend(opts.sourceDir, record);
  verified.catch(() => undefined); // awaited on every path below
  const guess = guessAppend(opts.sourceDir, record);
  const plan = guess.kind === "append" ? guess : await verified;
  const full = (reason: string) => {
    opts.log.info({ reason }, "full run");
    return fullRun(
      opts,
      verified.then((v) => v.files),
    );
  };
  if (plan.kind === "full") return full(plan.reason);
  try {
    return await inRun(opts, "append", async (ctx, id, current) => {
      if (current?.snapshotId !== published.snapshotId)
        throw new NotAnAppendError("another snapshot was published meanwhile");
      const baseDir = snapshotDir(opts.dataDir, published.snapshotId);
      const t = performance.now();
      const r = await appendStage(
        ctx,
        opts.sourceDir,
        baseDir,
        readMeta(opts.dataDir, published.snapshotId),
        record,
        plan,
        opts.catalog.allUserPortfolios(),
      );
      const v = await verified;
      if (v.kind === "full") throw new NotAnAppendError(v.reason);
      if (v.grown.join() !== plan.grown.join())
        throw new NotAnAppendError(
          `the files' bytes say ${v.grown.join(", ")} grew, their sizes ${plan.grown.join(", ")}`,
        );
      writeSourceRecord(ctx.out, v.files.files);
      const ms = Math.round(performance.now() - t);
      return {
        id,
        createdAt: new Date().toISOString(),
        sourceId: v.files.id,
        sourceDir: resolve(opts.sourceDir),
        lastPriceDate: r.lastPriceDate,
        counts: r.counts,
        timingsMs: { append: ms, ...r.timings, total: ms },
      };
    });
  } catch (e) {
    // An append begun on a wrong guess may fail in any way: the hashes decide whether that was the guess.
    const v = await verified.catch(() => null);
    const reason = e instanceof NotAnAppendError ? e.reason : v?.kind === "full" ? v.reason : null;
    if (reason === null) throw e;
    opts.log.info({ reason }, "the source does not continue the published snapshot: full run");
    return fullRun(
      opts,
      verified.then((x) => x.files),
    );
  }
}

/**
 * One run's staging folder, DuckDB and worker pool around `body`, which builds the snapshot
 * in `ctx.out` and returns its meta; then the publish. Nothing is published when it throws.
 */
async function inRun(
  opts: RunOptions,
  kind: "run" | "append",
  body: (ctx: StageContext, id: string, base: Manifest | null, partitionsDone: () => void) => Promise<SnapshotMeta>,
): Promise<RunResult> {
  const id = newSnapshotId();
  // The manifest version before the catalog is read: rebalances published after it are re-applied.
  const base = readManifest(opts.dataDir);
  const out = stagingDir(opts.dataDir, id, opts.job);
  let lease: { stop(): void } | null = null;
  // Bounded: DuckDB spills the staged tables to disk beyond this, instead of growing the process.
  const db = await openStagingDuck(out, { memory_limit: serviceConfig().stagingMemory });
  const workers = opts.workers ?? defaultWorkers();
  const pool = new PartitionPool(workers);
  // Every source with more than one company runs partition jobs: the threads load their modules
  // while this one opens the catalog and stages the source, not after.
  pool.warm();
  const runPartitions = <R>(jobs: PartitionJob[], onDone?: (done: number) => void) => pool.run<R>(jobs, onDone);
  const ctx: StageContext = {
    conn: db.conn,
    connect: db.connect,
    out,
    catalog: opts.catalog,
    log: opts.log,
    progress: opts.progress,
    runPartitions,
    tickersPerPartition: opts.tickersPerPartition,
    parallelism: Math.max(1, workers),
    published: base ? snapshotDir(opts.dataDir, base.snapshotId) : undefined,
  };
  try {
    await opts.catalog.refresh();
    // The published snapshot is read (a backfill merges into it; unchanged tables are linked from it): prune must spare
    // it.
    if (base) lease = takeLease(opts.dataDir, base.snapshotId);
    // No stage after the caller's last partition jobs runs any: the workers close their scratch
    // databases while this thread finishes and publishes.
    const meta = await body(ctx, id, base, () => void pool.close(true).catch(() => undefined));
    // A backfill merged into `base` and publishes only onto it; a run replaces whatever is current.
    const manifest = await publishSnapshot(opts.dataDir, out, meta, {
      kind: opts.window ? "backfill" : "run",
      job: opts.job,
      ...(opts.window ? { expect: base?.snapshotId ?? null } : {}),
    });
    opts.log.info({ snapshot: id, kind, timingsMs: meta.timingsMs }, "snapshot published");
    await reapplyMissedRebalances(opts, base?.version ?? 0, manifest);
    return { meta, manifest: readManifest(opts.dataDir) ?? manifest };
  } catch (e) {
    // Partition jobs still running write into the staging folder: they end before it goes.
    await pool.close(true);
    discardStaging(out);
    if (isNoSpace(e)) throw new NoSpaceError(opts.dataDir, readManifest(opts.dataDir)?.snapshotId ?? null, e);
    throw e;
  } finally {
    lease?.stop();
    await pool.close(true);
    try {
      db.close();
    } catch {
      // Closing checkpoints the staging database, which fails on a full disk: it is thrown away
      // with its folder below either way, and the run's own outcome is what is reported.
    }
    rmSync(stagingLayout(out).tmp, { recursive: true, force: true });
  }
}

/** Every stage over the whole source. `files`: the source's files and fingerprint, hashed while the stages run. */
async function fullRun(opts: RunOptions, files: Promise<SourceFiles>): Promise<RunResult> {
  files.catch(() => undefined); // awaited at the end; a source changed under a run is the same risk either way
  return inRun(opts, "run", async (ctx, id, base, partitionsDone) => {
    const t0 = performance.now();
    const timings: Record<string, number> = {};
    const lap = (name: string, since: number) => (timings[name] = Math.round(performance.now() - since));
    let t = performance.now();
    let sourceIdOf = (id: string) => id;
    let merge: ((s: StagedSource) => Promise<void>) | undefined;
    if (opts.window) {
      const current = base;
      if (!current) throw new Error("backfill needs a published snapshot to merge into; run the pipeline first");
      const w = opts.window;
      merge = (s) => mergeWindow(ctx.conn, s, snapshotDir(opts.dataDir, current.snapshotId), w);
      sourceIdOf = (id) => `${current.sourceId}+${id}@${w.from}..${w.to}`;
    }
    // Stage starts, for a terminal bar (the stages report their own steps where they have many).
    opts.progress?.("ingest: reading and validating the source", 0, 1);
    // The stock metric partitions (worker threads) read prices.parquet (written on a second
    // connection while this thread goes on) and the benchmark tables. With index benchmarks only
    // (no backtest), those tables are written as soon as the source's tables are clean, and the
    // partitions are queued behind the fundamentals' jobs: the workers go from one to the other
    // while this thread assigns company ids, reads the frames and backtests the portfolios.
    let stocks: Awaited<ReturnType<typeof startStockMetrics>> | null = null;
    let benchmarks: BenchmarkResult[] | null = null;
    // What writes into the staging folder: awaited before it is removed on a failure.
    const writing: Promise<unknown>[] = [];
    const startStocks = async (written: Promise<void>) => {
      stocks = await startStockMetrics(ctx, written);
      stocks.done.catch(() => undefined); // awaited below
      writing.push(stocks.done);
    };
    // Then the prices, ratings and index series are read for the backtests on a connection of their
    // own, while ingest waits for the fundamentals and assigns the company ids (only the companies
    // wait for their ids).
    let market: Promise<MarketFrames> | undefined;
    const early = async (s: StagedSource, written: Promise<void>) => {
      writing.push(written);
      const has = {
        ratings: s.tables.has("ratings"),
        benchmarks: s.tables.has("benchmarks"),
        keyOrdered: s.keyOrdered?.has("prices"),
      };
      const indexSeries = has.benchmarks ? await loadIndexSeries(ctx.conn) : new Map<string, LevelSeries>();
      if (indexBenchmarksOnly(s.portfolios)) {
        benchmarks = await benchmarksStage(ctx, { indexSeries }, null, s.portfolios);
        await startStocks(written);
      }
      const reader = ctx.connect ? await ctx.connect() : ctx.conn;
      market =
        reader === ctx.conn
          ? Promise.resolve(await loadMarketFrames(reader, has, indexSeries))
          : loadMarketFrames(reader, has, indexSeries);
      market.catch(() => undefined); // awaited below
      writing.push(market); // it reads the database the run closes on a failure
    };
    let frames: Frames | null;
    let universe: Universe | null;
    let portfolios: Map<string, PortfolioResult>;
    let counts: { companies: number; priceDates: number; ratings: number };
    let lastPriceDate: string;
    try {
      const { source, written } = await ingestStage(ctx, opts.sourceDir, merge, { clean: early });
      writing.push(written);
      lap("ingest", t);
      opts.signal?.throwIfAborted();
      t = performance.now();
      opts.progress?.("frames", 0, 1);
      frames = await loadFrames(
        ctx.conn,
        { ratings: source.tables.has("ratings"), benchmarks: source.tables.has("benchmarks") },
        await market,
      );
      if (!source.tables.has("ratings")) await computedRatingsStage(ctx, frames);
      universe = buildUniverse(frames.panel, frames.companies, frames.ratings);
      benchmarks ??= await benchmarksStage(ctx, frames, universe, source.portfolios);
      counts = {
        companies: frames.companies.length,
        priceDates: frames.panel.dates.length,
        ratings: frames.ratings.length,
      };
      lastPriceDate = frames.panel.dates.at(-1) ?? "";
      lap("frames", t);
      opts.signal?.throwIfAborted();
      t = performance.now();
      opts.progress?.("analytics", 0, 1);
      // The stock metrics run on the worker threads while this thread backtests the portfolios.
      if (!stocks) await startStocks(written);
      const tp = performance.now();
      portfolios = await portfoliosStage(ctx, universe, source.portfolios, opts.catalog.allUserPortfolios());
      lap("portfolios", tp);
      // The panel, ratings and universe are done with; only the partitions are still running.
      frames = universe = null;
      await stocks!.done;
      partitionsDone();
    } catch (e) {
      await Promise.all(writing.map((p) => p.catch(() => undefined)));
      throw e;
    }
    opts.signal?.throwIfAborted();
    await writePortfolioMetrics(ctx, portfolios, benchmarks!);
    lap("analytics", t);
    const f = await files;
    // A backfill's source is a window of the history: a later run cannot continue it by appending.
    if (!opts.window) writeSourceRecord(ctx.out, f.files);
    lap("total", t0);
    return {
      id,
      createdAt: new Date().toISOString(),
      sourceId: sourceIdOf(f.id),
      sourceDir: resolve(opts.sourceDir),
      lastPriceDate,
      counts: { ...counts, portfolios: portfolios.size, benchmarks: benchmarks!.length },
      timingsMs: timings,
    };
  });
}
