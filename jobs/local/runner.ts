// The in-process executor of a run's plan (pipeline/run/plan.ts): the flow's steps in this process,
// the partitions on worker threads (partition-pool.ts) or inline, ending in an atomic publish or in
// nothing at all. A nightly append continues the published snapshot instead. A `run` or `backfill`
// job on one BullMQ worker calls the same function.

import { rmSync } from "node:fs";
import type { z } from "zod";
import {
  buildRunPlan,
  PARTITIONED_STEPS,
  type PartitionedName,
  type PartitionedStep,
} from "../../pipeline/run/plan.ts";
import { guessAppend, planAppend, writeSourceRecord } from "../../pipeline/sources/append-plan.ts";
import { type SourceFiles, sourceFilesAsync } from "../../pipeline/sources/fingerprint.ts";
import type { StagedSource } from "../../pipeline/sources/index.ts";
import { appendStage, NotAnAppendError } from "../../pipeline/stages/append.ts";
import { type DateWindow, mergeWindow } from "../../pipeline/stages/backfill.ts";
import type { Log, StageContext } from "../../pipeline/stages/context.ts";
import {
  backtestsInline,
  type FlowPlan,
  flowIngestStep,
  forgetUniverse,
  planCounts,
} from "../../pipeline/stages/flow-steps.ts";
import type { PartitionJob } from "../../pipeline/stages/partition-jobs.ts";
import type { TickerRange } from "../../pipeline/stages/partitions.ts";
import type { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { takeLease } from "../../pipeline/store/coordination/leases.ts";
import { openStagingDuck } from "../../pipeline/store/duck/duck.ts";
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
  snapshotMeta,
  stagingDir,
} from "../../pipeline/store/snapshot/snapshots.ts";
import { stagingLayout } from "../../pipeline/store/snapshot/staging-layout.ts";
import { serviceConfig } from "../config.ts";
import { afterPublish, type EventSink } from "../webhooks/sink.ts";
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
  /** The webhook events step, after the publish (jobs/webhooks/sink.ts); none: a later step handles it. */
  events?: Pick<EventSink, "published">;
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
      return snapshotMeta({
        id,
        sourceId: v.files.id,
        sourceDir: opts.sourceDir,
        lastPriceDate: r.lastPriceDate,
        counts: r.counts,
        timingsMs: { append: ms, ...r.timings, total: ms },
      });
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
    await afterPublish(opts.events, manifest.version, opts.log);
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

/**
 * The inline executor of a full run or a backfill's plan (pipeline/run/plan.ts): the flow's steps in
 * this process, the partitions on the worker-thread pool. `files`: the source's files and
 * fingerprint, hashed while the steps run.
 */
async function fullRun(opts: RunOptions, files: Promise<SourceFiles>): Promise<RunResult> {
  files.catch(() => undefined); // awaited at the end; a source changed under a run is the same risk either way
  return inRun(opts, "run", async (ctx, id, base, partitionsDone) => {
    const timer = lapTimer();
    const backfill = opts.window ? backfillOf(ctx, base, opts.window) : null;
    // The stock metric partitions start as soon as their inputs are staged (with index benchmarks
    // only, before the company ids): the threads compute them while this one backtests.
    let stocks: Promise<unknown> | null = null;
    const analytics = async (ranges: TickerRange[], written: Promise<void>) => {
      const jobs = ranges.map((range) => PARTITIONED_STEPS.analytics.thread!(ctx.out, { range })); // it has one
      stocks = written
        .then(() => ctx.runPartitions!(jobs, (d) => ctx.progress?.("metrics", d, jobs.length)))
        .then(() => ctx.log.info({ partitions: jobs.length }, "analytics computed"));
      stocks.catch(() => undefined); // awaited below
    };
    let plan: FlowPlan;
    try {
      const users = opts.catalog.allUserPortfolios();
      const step = { analytics, merge: backfill?.merge, financials: true, universe: true, signal: opts.signal };
      plan = await flowIngestStep(ctx, opts.sourceDir, users, step);
      timer.lap("ingest");
      opts.signal?.throwIfAborted();
      // Stage starts, for a terminal bar (the stages report their own steps where they have many).
      opts.progress?.("analytics", 0, 1);
      await backtestsInline(ctx, plan);
      timer.lap("portfolios");
      await Promise.all([stocks, ...UNBOUND.map((n) => runStepPartitions(ctx, n))]);
      partitionsDone();
      timer.lap("analytics");
    } catch (e) {
      forgetUniverse();
      await (stocks as Promise<unknown> | null)?.catch(() => undefined); // it writes into the staging folder
      throw e;
    }
    opts.signal?.throwIfAborted();
    rmSync(stagingLayout(ctx.out).flowDir, { recursive: true, force: true }); // the plan's record is not published
    const f = await files;
    // A backfill's source is a window of the history: a later run cannot continue it by appending.
    if (!opts.window) writeSourceRecord(ctx.out, f.files);
    return snapshotMeta({
      id,
      sourceId: backfill ? backfill.sourceId(f.id) : f.id,
      sourceDir: opts.sourceDir,
      lastPriceDate: plan.lastPriceDate,
      counts: planCounts(plan),
      timingsMs: timer.total(),
    });
  });
}

/**
 * How this executor runs each partitioned step of the plan (pipeline/run/plan.ts): the financials
 * inside ingest (their partitions on the pool as soon as the companies are staged), the stock metrics
 * on the pool from ingest's hook, the backtests in one batch on this thread (one universe, no parts
 * to merge). A step without a binding here runs after ingest, its partitions on the pool when it has
 * a thread job, else one after another (runStepPartitions).
 */
const BOUND = new Set<PartitionedName>(["financials", "analytics", "backtest"]);
const UNBOUND = buildRunPlan("full")
  .steps.map((s) => s.name)
  .filter((n): n is PartitionedName => n in PARTITIONED_STEPS && !BOUND.has(n as PartitionedName));

async function runStepPartitions(ctx: StageContext, name: PartitionedName): Promise<void> {
  const step = PARTITIONED_STEPS[name] as PartitionedStep<z.ZodObject>;
  const inputs = step.partitions(ctx.out);
  const progress = (d: number) => ctx.progress?.(step.label, d, inputs.length);
  if (step.thread && ctx.runPartitions)
    await ctx.runPartitions(
      inputs.map((i) => step.thread!(ctx.out, i)),
      progress,
    );
  else for (const [k, i] of inputs.entries()) await step.run(ctx.out, i).then(() => progress(k + 1));
}

/** A backfill's merge into the published snapshot, and the source id its snapshot records. */
function backfillOf(ctx: StageContext, base: Manifest | null, w: DateWindow) {
  if (!base) throw new Error("backfill needs a published snapshot to merge into; run the pipeline first");
  const dir = ctx.published!;
  return {
    merge: (s: StagedSource) => mergeWindow(ctx.conn, s, dir, w),
    sourceId: (id: string) => `${base.sourceId}+${id}@${w.from}..${w.to}`,
  };
}

/** Milliseconds per step since the previous one, and the total. */
function lapTimer() {
  const t0 = performance.now();
  let t = t0;
  const timings: Record<string, number> = {};
  return {
    lap(name: string) {
      const now = performance.now();
      timings[name] = Math.round(now - t);
      t = now;
    },
    total: () => ({ ...timings, total: Math.round(performance.now() - t0) }),
  };
}
