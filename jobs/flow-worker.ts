// What a worker does for each job of a run's flow (jobs/flow.ts): the steps of
// pipeline/stages/flow-steps.ts on the run's staging folder, which every job finds by the source
// version in its data. While a job runs it keeps the folder's heartbeat fresh; the heartbeat
// names no process (a flow has many, on many machines), so prune judges it by age alone and
// spares the folder between jobs for the stale time (2 minutes).

import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { DelayedError, type Job, UnrecoverableError } from "bullmq";
import { writeSourceRecord } from "../pipeline/sources/append-plan.ts";
import { sourceFilesAsync, sourceStamp } from "../pipeline/sources/fingerprint.ts";
import { SourceRejectedError } from "../pipeline/sources/report.ts";
import type { Log, StageContext } from "../pipeline/stages/context.ts";
import { financialsPartition } from "../pipeline/stages/financials-partition.ts";
import {
  analyticsDone,
  backtestDone,
  financialsDone,
  financialsParts,
  financialsSlice,
  flowAside,
  flowBacktestStep,
  flowFundamentalsStep,
  flowIngestStep,
  flowMergeStep,
  holdsUniverse,
  readPlan,
  releaseUniverse,
  requireAnalyticsInputs,
  restoreFlowFiles,
  setFlowAside,
  stockMetricParts,
} from "../pipeline/stages/flow-steps.ts";
import { runPartitionJob } from "../pipeline/stages/partition-jobs.ts";
import type { TickerRange } from "../pipeline/stages/partitions.ts";
import type { Catalog } from "../pipeline/store/catalog/catalog.ts";
import { openDuck, openStagingDuck } from "../pipeline/store/duck.ts";
import { DUCK_MEMORY } from "../pipeline/store/duck-memory.ts";
import { takeLease } from "../pipeline/store/leases.ts";
import { startHeartbeat } from "../pipeline/store/liveness.ts";
import {
  type Manifest,
  newSnapshotId,
  publishSnapshot,
  readManifest,
  type SnapshotMeta,
  snapshotDir,
  stagingBeat,
  stagingPath,
} from "../pipeline/store/snapshots.ts";
import { serviceConfig } from "./config.ts";
import {
  AFFINITY_MS,
  type AnalyticsData,
  addFlowChildren,
  affinityWindowMs,
  type BacktestData,
  type FinancialsData,
  FLOW_JOBS,
  type FlowChildren,
  type FlowData,
  flowStagingId,
  runFlowIds,
} from "./flow.ts";
import type { JobResult } from "./job-types.ts";
import { closeQuietly, pipelineQueue } from "./queue.ts";
import { reapplyMissedRebalances } from "./reapply.ts";

export interface FlowDeps {
  redisUrl: string;
  prefix?: string;
  dataDir: string;
  catalog: Catalog;
  log: Log;
}

type Progress = StageContext["progress"];

/** What ingest records for the publish step besides the plan. */
interface RunRecord {
  /** The ingest job's creation time: a plan from another flow of the same source is not reused. */
  ingestJob: number;
  baseVersion: number;
  ingestMs: number;
  startedAt: number;
  /**
   * The fingerprint of the source's bytes as ingest read them: the snapshot's sourceId. Absent from
   * a record written before jobs were named by the stamp, when the flow's sourceVersion was it.
   */
  sourceId?: string;
}
const recordPath = (out: string) => join(out, ".flow", "run.json");

/** Keeps the flow's staging heartbeat fresh while one of its jobs runs; leaves it in place after. */
function holdStaging(dataDir: string, stagingId: string, parentId: string, out: string): () => void {
  // host "flow@…": never this machine's hostname, so liveness goes by the file's age, not a pid;
  // recreated if pruned under a long stall, but not after the publish moved the folder away.
  const beat = startHeartbeat(stagingBeat(dataDir, stagingId), {
    job: parentId,
    host: `flow@${hostname()}`,
    whileExists: out,
  });
  return () => beat.pause();
}

/** A flow job runs on one core: DuckDB threads of a worker process (PIPELINE_WORKER_THREADS, default 1). */
export function workerThreads(): number {
  return serviceConfig().workerThreads;
}

/**
 * The flow this job belongs to is over: its parent is gone (Redis lost it; or it was added again
 * as another flow, `run` differs) or failed (another child failed for good). Redis unreachable: not known, false.
 */
async function flowGone(job: Job, deps: FlowDeps): Promise<boolean> {
  if (!job.parent?.id) return false;
  const queue = pipelineQueue(deps.redisUrl, deps.prefix);
  try {
    const parent = await queue.getJob(job.parent.id);
    if (!parent) return true;
    if ((parent.data as FlowData).run !== (job.data as FlowData).run) return true;
    return (await parent.getState()) === "failed";
  } catch {
    return false;
  } finally {
    await closeQuietly(queue);
  }
}

/** The run's staging folder and heartbeat, removed once its flow cannot publish. */
function dropStaging(deps: FlowDeps, stagingId: string, out: string, why: string, job: Job): void {
  rmSync(out, { recursive: true, force: true });
  rmSync(`${out}.tmp`, { recursive: true, force: true });
  rmSync(flowAside(out), { recursive: true, force: true });
  rmSync(stagingBeat(deps.dataDir, stagingId), { force: true });
  deps.log.info({ job: job.id, staging: stagingId }, `run's staging folder removed: ${why}`);
}

/** This failure ends the flow: not retried (unrecoverable, or the last attempt). */
function lastFailure(job: Job, e: unknown): boolean {
  return (
    e instanceof UnrecoverableError ||
    e instanceof SourceRejectedError ||
    job.attemptsMade + 1 >= (job.opts.attempts ?? 1)
  );
}

/** This process among a flow's workers (BacktestData.affinity). */
const WORKER = `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;

/**
 * A backtest whose universe another live worker holds is left to it for a while (its affinityMs from
 * its creation): put back as delayed, and this worker takes the next job. After that, or when the
 * job names no worker, any worker runs it.
 */
async function leaveToAffinity(job: Job, out: string, token: string | undefined): Promise<boolean> {
  if (
    !token ||
    !leaveBacktest(job.data as BacktestData, {
      worker: WORKER,
      holdsUniverse: holdsUniverse(out),
      ageMs: Date.now() - job.timestamp,
    })
  )
    return false;
  await job.moveToDelayed(Date.now() + 200, token);
  return true;
}

/** Whether this worker leaves a backtest to the worker its data names (see leaveToAffinity). */
export function leaveBacktest(
  data: Pick<BacktestData, "affinity" | "affinityMs">,
  here: { worker: string; holdsUniverse: boolean; ageMs: number },
): boolean {
  return (
    !!data.affinity &&
    data.affinity !== here.worker &&
    !here.holdsUniverse &&
    here.ageMs <= (data.affinityMs ?? AFFINITY_MS)
  );
}

export async function processFlowJob(
  job: Job,
  deps: FlowDeps,
  progress: Progress,
  token?: string,
): Promise<JobResult | { done: string }> {
  const data = job.data as FlowData;
  const ids = runFlowIds(data.sourceVersion);
  const stagingId = flowStagingId(data);
  const out = stagingPath(deps.dataDir, stagingId);
  if (job.name === FLOW_JOBS.backtest && (await leaveToAffinity(job, out, token))) {
    deps.log.info(
      { job: job.id, ageMs: Date.now() - job.timestamp },
      "backtest left to the worker holding its universe",
    );
    throw new DelayedError();
  }
  // A leftover child of a flow that failed or was lost does nothing but clear its folder.
  if (job.name !== FLOW_JOBS.parent && (await flowGone(job, deps))) {
    dropStaging(deps, stagingId, out, "its flow failed or was lost", job);
    return { done: job.id! };
  }
  const release = holdStaging(deps.dataDir, stagingId, ids.parent, out);
  if (job.name !== FLOW_JOBS.backtest) releaseUniverse(out);
  try {
    switch (job.name) {
      case FLOW_JOBS.ingest:
        return await ingest(job, deps, out, progress);
      case FLOW_JOBS.fundamentals:
        return await fundamentals(job, deps, out, progress);
      case FLOW_JOBS.financials: {
        const { part } = job.data as FinancialsData;
        progress?.("financials", 0, 1);
        const r = await financialsPartition({ out, sliceDir: financialsSlice(out, part), part });
        if (r.rejectCount) throw new SourceRejectedError(r.rejects, r.rejectCount);
        return { done: job.id! };
      }
      case FLOW_JOBS.analytics: {
        requireAnalyticsInputs(out); // a clear message when the staging folder is gone
        const { range } = job.data as AnalyticsData;
        progress?.("analytics", 0, 1);
        await runPartitionJob({ stage: "metrics", data: { out, range } });
        return { done: job.id! };
      }
      case FLOW_JOBS.backtest: {
        const { portfolioId } = job.data as BacktestData;
        progress?.("backtest", 0, 1);
        await flowBacktestStep(out, portfolioId);
        return { done: job.id! };
      }
      case FLOW_JOBS.parent:
        return await publish(job, deps, out, stagingId);
      default:
        throw new Error(`unknown flow job ${job.name}`);
    }
  } catch (e) {
    // The flow fails with this job: nothing will publish the folder, so it goes now, not 2 minutes later.
    if (lastFailure(job, e)) {
      release();
      dropStaging(deps, stagingId, out, `${job.id} failed for good`, job);
    } else if (job.name !== FLOW_JOBS.parent && (await flowGone(job, deps))) {
      release();
      dropStaging(deps, stagingId, out, "its flow failed or was lost", job);
    }
    throw e;
  } finally {
    release();
  }
}

/** Splits the fundamentals by ticker range and adds one financials job per range to the parent. */
async function fundamentals(job: Job, deps: FlowDeps, out: string, progress: Progress): Promise<{ done: string }> {
  const data = job.data as FlowData;
  if (!job.parent?.id)
    throw new Error(`fundamentals job ${job.id} has no parent: it is added only as part of a run's flow`);
  mkdirSync(out, { recursive: true });
  progress?.("fundamentals: splitting by ticker range", 0, 1);
  const base = readManifest(deps.dataDir);
  const lease = base ? takeLease(deps.dataDir, base.snapshotId) : null;
  const db = await openDuck(":memory:", {
    threads: String(workerThreads()),
    memory_limit: DUCK_MEMORY.fundamentalsSplit,
  });
  let parts: number;
  try {
    parts = await flowFundamentalsStep(
      {
        conn: db.conn,
        out,
        published: base ? snapshotDir(deps.dataDir, base.snapshotId) : undefined,
        tickersPerPartition: tickersPerPartition(),
      },
      data.sourceDir,
    );
  } finally {
    lease?.stop();
    db.close();
  }
  await addChildren(job, deps, out, { financials: parts });
  deps.log.info(
    { job: job.id, partitions: parts },
    parts
      ? "fundamentals split; financials jobs added"
      : "fundamentals unchanged: financial tables reused from the published snapshot",
  );
  return { done: job.id! };
}

const tickersPerPartition = () => serviceConfig().tickersPerPartition;

/** Adds children to this job's parent (the flow), unless the flow is over. */
async function addChildren(job: Job, deps: FlowDeps, out: string, c: Omit<FlowChildren, "done">): Promise<void> {
  // Lost meanwhile (Redis restarted empty; maybe added again as another flow): add nothing to it.
  if (await flowGone(job, deps))
    throw new UnrecoverableError(`the run's flow ${job.parent!.id} failed or was lost while ${job.id} ran`);
  const queue = pipelineQueue(deps.redisUrl, deps.prefix);
  try {
    const done = {
      analytics: (r: TickerRange) => analyticsDone(out, r),
      backtest: (id: string) => backtestDone(out, id),
      financials: (p: number) => financialsDone(out, p),
    };
    await addFlowChildren(queue, { id: job.parent!.id!, queueKey: job.parent!.queueKey }, job.data as FlowData, {
      ...c,
      done,
    });
  } finally {
    await closeQuietly(queue);
  }
}

async function ingest(job: Job, deps: FlowDeps, out: string, progress: Progress): Promise<{ done: string }> {
  const data = job.data as FlowData;
  if (!job.parent?.id) throw new Error(`ingest job ${job.id} has no parent: it is added only as part of a run's flow`);
  const prior = existsSync(recordPath(out)) ? (JSON.parse(readFileSync(recordPath(out), "utf8")) as RunRecord) : null;
  let plan: ReturnType<typeof readPlan>;
  if (prior?.ingestJob === job.timestamp) {
    // An earlier attempt of this very job staged everything and may have added some partitions: add the rest.
    plan = readPlan(out);
    await addChildren(job, deps, out, { analytics: plan.ranges });
  } else {
    const t0 = performance.now();
    let sourceId = "";
    // The folder is this flow's own (named by its run id); the fundamentals job writes into it too.
    mkdirSync(out, { recursive: true });
    const base = readManifest(deps.dataDir);
    await deps.catalog.refresh();
    const lease = base ? takeLease(deps.dataDir, base.snapshotId) : null;
    const db = await openStagingDuck(out, {
      threads: String(workerThreads()),
      memory_limit: serviceConfig().stagingMemory,
    });
    try {
      const ctx: StageContext = {
        conn: db.conn,
        // the source tables are written, and the price panel read, on connections of their own
        connect: db.connect,
        out,
        catalog: deps.catalog,
        log: deps.log,
        progress,
        published: base ? snapshotDir(deps.dataDir, base.snapshotId) : undefined,
        tickersPerPartition: tickersPerPartition(),
      };
      // The stock metric partitions are added as soon as their inputs are staged: other workers
      // compute them while this job assigns the company ids and writes the plan.
      // The source's files are hashed while DuckDB stages them (this thread waits on DuckDB most of
      // that time), not after: 1.5 s at 5,000 x 25 that the job no longer ends with.
      // The hash is what the snapshot records as its source (the jobs are named by the files' stamp).
      const stamp = sourceStamp(data.sourceDir);
      const hashed = sourceFilesAsync(data.sourceDir);
      hashed.catch(() => undefined); // awaited below; not an unhandled rejection if ingest fails first
      plan = await flowIngestStep(ctx, data.sourceDir, deps.catalog.allUserPortfolios(), (ranges) =>
        addChildren(job, deps, out, { analytics: ranges }),
      );
      const files = await hashed;
      // A file written while it was read: neither the tables nor the hash are of one version (retried).
      if (sourceStamp(data.sourceDir) !== stamp)
        throw new Error(
          `the source ${data.sourceDir} changed while the run read it (a file's size or modification time moved)`,
        );
      sourceId = files.id;
      // What a later nightly append compares its source with.
      writeSourceRecord(out, files.files);
    } finally {
      lease?.stop();
      db.close();
      rmSync(`${out}.tmp`, { recursive: true, force: true });
    }
    const record: RunRecord = {
      ingestJob: job.timestamp,
      baseVersion: base?.version ?? 0,
      ingestMs: Math.round(performance.now() - t0),
      startedAt: job.timestamp,
      sourceId,
    };
    writeFileSync(recordPath(out), JSON.stringify(record));
  }
  // The backtests read companies.parquet (with ids) and the plan: added last, for this worker
  // when it holds the universe they read.
  await addChildren(job, deps, out, {
    portfolioIds: plan.portfolioIds,
    ...(holdsUniverse(out)
      ? { affinity: WORKER, affinityMs: affinityWindowMs(plan.counts.companies, plan.counts.priceDates) }
      : {}),
  });
  deps.log.info(
    { job: job.id, partitions: plan.ranges.length, portfolios: plan.portfolioIds.length },
    "run staged; partition jobs added",
  );
  return { done: job.id! };
}

async function publish(job: Job, deps: FlowDeps, out: string, stagingId: string): Promise<JobResult> {
  const data = job.data as FlowData;
  // A retry: an earlier attempt's publish failed (files put back), or it died before it could.
  restoreFlowFiles(out);
  const aside = flowAside(out);
  if (!existsSync(out)) {
    // Published by an earlier attempt that failed after it (the snapshot is live): finish, don't fail.
    const sent = existsSync(join(aside, PUBLISHING))
      ? (JSON.parse(readFileSync(join(aside, PUBLISHING), "utf8")) as {
          snapshotId: string;
          baseVersion: number;
          totalMs: number;
        })
      : null;
    const entry = sent
      ? readManifest(deps.dataDir)?.log?.find((e) => e.snapshotId === sent.snapshotId && e.job === job.id)
      : undefined;
    if (!sent || !entry)
      throw new Error(
        `the run's staging folder ${out} is gone and no publish of it is recorded; run the command again`,
      );
    await finishPublish(job, deps, stagingId, sent.baseVersion, {
      ...readManifest(deps.dataDir)!,
      version: entry.version,
    });
    return { snapshotId: sent.snapshotId, totalMs: sent.totalMs };
  }
  const record = JSON.parse(readFileSync(recordPath(out), "utf8")) as RunRecord;
  const t = performance.now();
  const fin = financialsParts(out);
  if (fin.planned < 0 || fin.written !== fin.planned)
    throw new Error(`financials: ${fin.written} of ${fin.planned < 0 ? "?" : fin.planned} partitions in ${out}`);
  const plan = await flowMergeStep(out);
  if (stockMetricParts(out) !== plan.ranges.length)
    throw new Error(`stock metrics: ${stockMetricParts(out)} of ${plan.ranges.length} partitions in ${out}`);
  const total = Date.now() - record.startedAt;
  const meta: SnapshotMeta = {
    id: newSnapshotId(),
    createdAt: new Date().toISOString(),
    sourceId: record.sourceId ?? data.sourceVersion,
    sourceDir: resolve(data.sourceDir),
    lastPriceDate: plan.lastPriceDate,
    counts: {
      companies: plan.counts.companies,
      priceDates: plan.counts.priceDates,
      ratings: plan.counts.ratings,
      portfolios: plan.portfolioIds.length,
      benchmarks: plan.counts.benchmarks,
    },
    timingsMs: { ingest: record.ingestMs, merge: Math.round(performance.now() - t), total },
  };
  writeFileSync(
    join(out, ".flow", PUBLISHING),
    JSON.stringify({ snapshotId: meta.id, baseVersion: record.baseVersion, totalMs: total }),
  );
  setFlowAside(out);
  let manifest: Manifest;
  try {
    manifest = await publishSnapshot(deps.dataDir, out, meta, { kind: "run", job: job.id });
  } catch (e) {
    restoreFlowFiles(out);
    throw e;
  }
  deps.log.info({ snapshot: meta.id, timingsMs: meta.timingsMs }, "snapshot published");
  await finishPublish(job, deps, stagingId, record.baseVersion, manifest);
  return { snapshotId: meta.id, totalMs: total };
}

/** What is written while publishing: the snapshot's id, for a retry to find its publish in the manifest's log. */
const PUBLISHING = "publishing.json";

async function finishPublish(
  job: Job,
  deps: FlowDeps,
  stagingId: string,
  baseVersion: number,
  manifest: Manifest,
): Promise<void> {
  rmSync(flowAside(stagingPath(deps.dataDir, stagingId)), { recursive: true, force: true });
  rmSync(stagingBeat(deps.dataDir, stagingId), { force: true });
  await reapplyMissedRebalances(
    { dataDir: deps.dataDir, catalog: deps.catalog, log: deps.log, job: job.id },
    baseVersion,
    manifest,
  );
}
