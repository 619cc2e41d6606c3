// The in-process executor of a run's plan (pipeline/run/plan.ts): the flow's steps in this process,
// the partitions on worker threads (partition-pool.ts) or inline, ending in an atomic publish or in
// nothing at all. A nightly append runs its own plan's steps (KIND_STAGES.append, through
// pipeline/run/execute.ts) on the published snapshot. A `run` or `backfill` job on one BullMQ worker
// calls the same function.

import type { z } from "zod";
import { executeSteps, type StepStages } from "../../pipeline/run/execute.ts";
import { RunLifecycle } from "../../pipeline/run/lifecycle.ts";
import {
  buildRunPlan,
  KIND_STAGES,
  PARTITIONED_STEPS,
  type PartitionedName,
  type PartitionedStep,
  type StepHost,
  type StepName,
} from "../../pipeline/run/plan.ts";
import type { RunHost } from "../../pipeline/run/run-steps.ts";
import { UniverseCache } from "../../pipeline/run/universe-cache.ts";
import { type AppendPlan, guessAppend, planAppend, writeSourceRecord } from "../../pipeline/sources/append-plan.ts";
import { type SourceFiles, sourceFilesAsync } from "../../pipeline/sources/fingerprint.ts";
import type { StagedSource } from "../../pipeline/sources/index.ts";
import { appendResult, appendRun, NotAnAppendError } from "../../pipeline/stages/append.ts";
import { type DateWindow, mergeWindow } from "../../pipeline/stages/backfill.ts";
import type { Log, StageContext } from "../../pipeline/stages/context.ts";
import { planCounts } from "../../pipeline/stages/flow-steps.ts";
import { LevelsCache } from "../../pipeline/stages/metrics-partition.ts";
import type { PartitionJob } from "../../pipeline/stages/partition-jobs.ts";
import type { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { openStagingDuck } from "../../pipeline/store/duck/duck.ts";
import {
  isNoSpace,
  type Manifest,
  NoSpaceError,
  readManifest,
  readMeta,
  type SnapshotMeta,
  snapshotDir,
  snapshotMeta,
} from "../../pipeline/store/snapshot/snapshots.ts";
import { serviceConfig } from "../config.ts";
import type { EventSink } from "../webhooks/event-sink.ts";
import { afterRunPublish } from "./after-publish.ts";
import { defaultWorkers, PartitionPool } from "./partition-pool.ts";
import { publishedRecord } from "./published-record.ts";

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
  /** The webhook events step, after the publish (jobs/webhooks/event-sink.ts); none: a later step handles it. */
  events?: Pick<EventSink, "published">;
}

export interface RunResult {
  meta: SnapshotMeta;
  manifest: Manifest;
}

/** `PIPELINE_APPEND=0` turns the nightly append off: every run recomputes in full. */
export async function runPipeline(opts: RunOptions): Promise<RunResult> {
  // A source that only added days to the published one continues it (the append plan).
  const p = opts.window ? null : publishedRecord(opts.dataDir);
  if (!p) return fullRun(opts, sourceFilesAsync(opts.sourceDir));
  // Hashing the source's bytes takes seconds at 5,000 × 25 (a nightly append's budget): it runs
  // while the append computes from what the files' sizes say, and decides before anything publishes.
  const verified = planAppend(opts.sourceDir, p.record);
  verified.catch(() => undefined); // awaited on every path below
  const guess = guessAppend(opts.sourceDir, p.record);
  const plan = guess.kind === "append" ? guess : await verified;
  const full = (reason: string, message: string) => {
    opts.log.info({ reason }, message);
    return fullRun(
      opts,
      verified.then((v) => v.files),
    );
  };
  if (plan.kind === "full") return full(plan.reason, "full run");
  try {
    return await appendRunOn(opts, p, plan, verified);
  } catch (e) {
    // An append begun on a wrong guess may fail in any way: the hashes decide whether that was the guess.
    const v = await verified.catch(() => null);
    const reason = e instanceof NotAnAppendError ? e.reason : v?.kind === "full" ? v.reason : null;
    if (reason === null) throw e;
    return full(reason, "the source does not continue the published snapshot: full run");
  }
}

type AppendOnly = Extract<AppendPlan, { kind: "append" }>;

/**
 * The inline executor of an append's plan: its steps' stage functions (KIND_STAGES.append) on the
 * published snapshot `p`; published only when the source's hashes confirm the guess.
 */
function appendRunOn(
  opts: RunOptions,
  p: NonNullable<ReturnType<typeof publishedRecord>>,
  plan: AppendOnly,
  verified: Promise<AppendPlan>,
): Promise<RunResult> {
  const { base: published, record } = p;
  return inRun(opts, "append", async (ctx, id, current) => {
    if (current?.snapshotId !== published.snapshotId)
      throw new NotAnAppendError("another snapshot was published meanwhile");
    const t = performance.now();
    const baseDir = snapshotDir(opts.dataDir, published.snapshotId);
    const baseMeta = readMeta(opts.dataDir, published.snapshotId);
    const users = opts.catalog.allUserPortfolios();
    const run = appendRun(ctx, opts.sourceDir, baseDir, baseMeta, record, plan, users);
    await executeSteps(buildRunPlan("append"), KIND_STAGES.append, run);
    const r = appendResult(run);
    const files = await confirmAppend(plan, verified);
    writeSourceRecord(ctx.out, files.files);
    const ms = Math.round(performance.now() - t);
    return snapshotMeta({
      id,
      sourceId: files.id,
      sourceDir: opts.sourceDir,
      lastPriceDate: r.lastPriceDate,
      counts: r.counts,
      timingsMs: { append: ms, ...r.timings, total: ms },
    });
  });
}

/** The source's files when their hashes say the same files grew as their sizes did, else NotAnAppendError. */
async function confirmAppend(plan: AppendOnly, verified: Promise<AppendPlan>): Promise<SourceFiles> {
  const v = await verified;
  if (v.kind === "full") throw new NotAnAppendError(v.reason);
  if (v.grown.join() !== plan.grown.join())
    throw new NotAnAppendError(`the files' bytes say ${v.grown.join(", ")} grew, their sizes ${plan.grown.join(", ")}`);
  return v.files;
}

type RunBody = (
  ctx: StageContext,
  id: string,
  base: Manifest | null,
  partitionsDone: () => void,
) => Promise<SnapshotMeta>;

/**
 * One run's lifecycle (pipeline/run/lifecycle.ts: staging folder, heartbeat, lease, publish), DuckDB
 * and worker pool around `body`, which builds the snapshot in `ctx.out` and returns its meta; then the
 * publish and the after-publish steps. Nothing is published when it throws.
 */
async function inRun(opts: RunOptions, kind: "run" | "append", body: RunBody): Promise<RunResult> {
  const run = RunLifecycle.open({
    dataDir: opts.dataDir,
    job: opts.job,
    log: opts.log,
    afterPublish: afterRunPublish(opts),
  });
  const id = run.stagingId;
  // The manifest version before the catalog is read: rebalances published after it are re-applied.
  // Its snapshot is read (a backfill merges into it; unchanged tables are linked from it): leased, so prune spares it.
  const base = run.leaseBase();
  const out = run.out;
  // Bounded: DuckDB spills the staged tables to disk beyond this, instead of growing the process.
  const db = await openStagingDuck(out, { memory_limit: serviceConfig().stagingMemory });
  const workers = opts.workers ?? defaultWorkers();
  const pool = new PartitionPool(workers);
  // Every source with more than one company runs partition jobs: the threads load their modules
  // while this one opens the catalog and stages the source, not after.
  pool.warm();
  const ctx = runContext(opts, db, out, pool, workers, base);
  try {
    await opts.catalog.refresh();
    // No stage after the caller's last partition jobs runs any: the workers close their scratch
    // databases while this thread finishes and publishes.
    const meta = await body(ctx, id, base, () => void pool.close(true).catch(() => undefined));
    // A backfill merged into `base` and publishes only onto it; a run replaces whatever is current.
    const manifest = await run.publish(meta, {
      kind: opts.window ? "backfill" : "run",
      ...(opts.window ? { expect: base?.snapshotId ?? null } : {}),
      baseVersion: base?.version ?? 0,
      logged: { kind },
    });
    return { meta, manifest: readManifest(opts.dataDir) ?? manifest };
  } catch (e) {
    // Partition jobs still running write into the staging folder: they end before it goes.
    await pool.close(true);
    run.discard();
    if (isNoSpace(e)) throw new NoSpaceError(opts.dataDir, readManifest(opts.dataDir)?.snapshotId ?? null, e);
    throw e;
  } finally {
    await pool.close(true);
    try {
      db.close();
    } catch {
      // Closing checkpoints the staging database, which fails on a full disk: it is thrown away
      // with its folder either way, and the run's own outcome is what is reported.
    }
    run.close();
  }
}

/** The stage context of a run in `out`: its DuckDB, its partition pool, the published snapshot. */
function runContext(
  opts: RunOptions,
  db: Awaited<ReturnType<typeof openStagingDuck>>,
  out: string,
  pool: PartitionPool,
  workers: number,
  base: Manifest | null,
): StageContext {
  return {
    conn: db.conn,
    connect: db.connect,
    out,
    catalog: opts.catalog,
    log: opts.log,
    progress: opts.progress,
    runPartitions: <R>(jobs: PartitionJob[], onDone?: (done: number) => void) => pool.run<R>(jobs, onDone),
    tickersPerPartition: opts.tickersPerPartition,
    parallelism: Math.max(1, workers),
    published: base ? snapshotDir(opts.dataDir, base.snapshotId) : undefined,
  };
}

/**
 * The inline executor of a full run or a backfill's plan (pipeline/run/plan.ts): the plan's steps
 * (executeSteps) with their stage functions (KIND_STAGES) on this executor's host (inlineHost), the
 * partitions on the worker-thread pool. `files`: the source's files and fingerprint, hashed while the steps run.
 */
async function fullRun(opts: RunOptions, files: Promise<SourceFiles>): Promise<RunResult> {
  files.catch(() => undefined); // awaited at the end; a source changed under a run is the same risk either way
  return inRun(opts, "run", async (ctx, id, base, partitionsDone) => {
    const timer = lapTimer();
    const backfill = opts.window ? backfillOf(ctx, base, opts.window) : null;
    const kind = opts.window ? "backfill" : "full";
    const { host, started } = inlineHost(opts, ctx, backfill);
    try {
      await executeSteps(buildRunPlan(kind), timed(KIND_STAGES[kind], opts, timer.lap), host);
      partitionsDone();
      timer.lap("analytics");
    } catch (e) {
      host.universes.forget();
      // partitions still running write into the staging folder
      await Promise.all([...started.values()].map((p) => p.catch(() => undefined)));
      throw e;
    }
    const plan = host.plan!; // ingest ran
    opts.signal?.throwIfAborted();
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

/** This executor's timings and progress around the plan's stage functions. */
function timed(
  stages: StepStages<RunHost, StepName>,
  opts: RunOptions,
  lap: (name: string) => void,
): StepStages<RunHost, StepName> {
  const after: Partial<Record<StepName, () => void>> = {
    ingest: () => {
      lap("ingest");
      opts.signal?.throwIfAborted();
      // Stage starts, for a terminal bar (the stages report their own steps where they have many).
      opts.progress?.("analytics", 0, 1);
    },
    backtest: () => lap("portfolios"),
  };
  return Object.fromEntries(
    Object.entries(stages).map(([name, stage]) => [
      name,
      async (h: RunHost) => {
        await stage!(h);
        after[name as StepName]?.();
      },
    ]),
  );
}

/**
 * What the plan's steps get in this process: one process runs them all (ingest computes the
 * financials on the pool and keeps the universe); the stock metric partitions start on the pool from
 * ingest's hook, as soon as their inputs are staged (the threads compute them while this one
 * backtests); a partitioned step runs as one batch when it has one, else its partitions on the pool
 * when it has a thread job, else one after another.
 */
function inlineHost(opts: RunOptions, ctx: StageContext, backfill: ReturnType<typeof backfillOf> | null) {
  const started = new Map<string, Promise<unknown>>();
  const host: RunHost = {
    ctx,
    sourceDir: opts.sourceDir,
    users: () => opts.catalog.allUserPortfolios(),
    signal: opts.signal,
    merge: backfill?.merge,
    oneProcess: true,
    plan: null,
    // this run's: built by ingest, read by the backtest batch, let go with the run
    universes: new UniverseCache(),
    levels: new LevelsCache(),
    partitionsReady: async (name, inputs, written) => {
      const step = PARTITIONED_STEPS[name] as PartitionedStep<z.ZodObject>;
      const jobs = inputs.map((i) => step.thread!(ctx.out, i)); // a step started early has one
      const run = written
        .then(() => ctx.runPartitions!(jobs, (d) => ctx.progress?.("metrics", d, jobs.length)))
        .then(() => ctx.log.info({ partitions: jobs.length }, `${name} computed`));
      run.catch(() => undefined); // awaited by the step, or on a failure
      started.set(name, run);
    },
    runPartitions: async (name) => {
      const early = started.get(name);
      if (early) await early;
      else await runStepPartitions(ctx, name as PartitionedName, host);
    },
  };
  return { host, started };
}

async function runStepPartitions(ctx: StageContext, name: PartitionedName, host: StepHost): Promise<void> {
  const step = PARTITIONED_STEPS[name] as PartitionedStep<z.ZodObject>;
  if (step.batch) return step.batch(ctx, host);
  const inputs = step.partitions(ctx.out);
  const progress = (d: number) => ctx.progress?.(step.label, d, inputs.length);
  if (step.thread && ctx.runPartitions)
    await ctx.runPartitions(
      inputs.map((i) => step.thread!(ctx.out, i)),
      progress,
    );
  else for (const [k, i] of inputs.entries()) await step.run(ctx.out, i, host).then(() => progress(k + 1));
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
