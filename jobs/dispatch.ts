// One entry point per request ("run the pipeline on this source", "rebalance this portfolio"):
// in-process without Redis, as an idempotent BullMQ job with it (any worker may take it; this
// process waits for the outcome, with a timeout, showing progress).
import type { Log } from "../pipeline/stages/context.ts";
import type { DateWindow } from "../pipeline/stages/backfill.ts";
import { rebalanceOne } from "../pipeline/stages/rebalance.ts";
import type { Catalog } from "../pipeline/store/catalog/catalog.ts";
import { ManifestMovedError, readManifest } from "../pipeline/store/snapshots.ts";
import { sourceFingerprint } from "../pipeline/sources/fingerprint.ts";
import { continuesPublished } from "./runner.ts";
import { awaitJob, JobFailedError } from "./await-job.ts";
import { enqueueIdempotent } from "./enqueue.ts";
import { backfillVersion, jobId, versionOf, WHOLE, type JobProgress, type JobResult, type Stage } from "./job-types.ts";
import { closeQuietly, pipelineQueue } from "./queue.ts";
import { addRunFlow, flowByDefault, flowProgress, runFlowIds } from "./flow.ts";
import type { Job, Queue } from "bullmq";
import type { PublishKind } from "../pipeline/store/snapshots.ts";
import { catalogLookup } from "./reapply.ts";
import { runPipeline } from "./runner.ts";

export { JobFailedError, JobLostError, JobTimeoutError } from "./await-job.ts";
export { scheduleNightly } from "./schedule.ts";

export interface DispatchOptions {
  dataDir: string;
  sourceDir: string;
  catalog: Catalog;
  log: Log;
  redisUrl: string | null;
  prefix?: string;
  progress?: (stage: string, done: number, total: number) => void;
  /** Situation lines while waiting on a queue (no worker, Redis away, retrying). */
  note?: (line: string) => void;
  window?: DateWindow;
  /** How long the enqueuing command waits for a queued job (default 1 h). */
  timeoutMs?: number;
  /** Recompute even when the published snapshot already holds this source (or this backfill). */
  force?: boolean;
  /** A queued run as a flow of partition jobs (default, unless PIPELINE_FLOW=0), or as one `run` job. */
  flow?: boolean;
}

export interface DispatchResult extends JobResult {
  /** The published snapshot already held this source: nothing was computed. */
  skipped?: boolean;
}

export const DEFAULT_TIMEOUT_MS = 3_600_000;
const ENQUEUE_TIMEOUT_MS = 30_000;

export async function dispatchRun(opts: DispatchOptions): Promise<DispatchResult> {
  const sourceVersion = sourceFingerprint(opts.sourceDir);
  const current = readManifest(opts.dataDir);
  if (!opts.force && current && alreadyHolds(current.sourceId, sourceVersion, opts.window)) return { snapshotId: current.snapshotId, totalMs: 0, skipped: true };
  if (!opts.redisUrl) return inProcess(opts);
  // A run as a flow of partition jobs that any number of workers share; a backfill is one job,
  // and so is a nightly append (it reads only the new days: README "Nightly append").
  if (!opts.window && useFlow(opts) && !(await continuesPublished(opts.dataDir, opts.sourceDir))) {
    const ids = runFlowIds(sourceVersion);
    return viaQueue(opts, "publish", {}, ids.parent, (q) => addRunFlow(q, { sourceDir: opts.sourceDir, sourceVersion }));
  }
  const stage: Stage = opts.window ? "backfill" : "run";
  const id = jobId(stage, opts.window ? backfillVersion(sourceVersion, opts.window) : sourceVersion, WHOLE);
  const data = { sourceDir: opts.sourceDir, sourceVersion, partition: WHOLE, ...(opts.window ? { window: opts.window } : {}) };
  return viaQueue(opts, stage, data, id);
}

/** The flow unless told otherwise (`flow: false`, or PIPELINE_FLOW=0: the single `run` job). */
function useFlow(opts: DispatchOptions): boolean {
  return opts.flow ?? flowByDefault();
}

/** A run publishes the source's fingerprint as sourceId; a backfill appends `+fp@from..to`. */
function alreadyHolds(sourceId: string, fp: string, w?: DateWindow): boolean {
  return w ? sourceId.endsWith(`+${fp}@${w.from}..${w.to}`) : sourceId === fp;
}

async function inProcess(opts: DispatchOptions): Promise<DispatchResult> {
  // A backfill merges into the snapshot current when it starts; if another publish moved the
  // manifest meanwhile, it is computed again on the new one (as a queued job would be retried).
  for (let attempt = 1; ; attempt++) {
    try {
      const { meta } = await runPipeline(opts);
      return { snapshotId: meta.id, totalMs: meta.timingsMs.total };
    } catch (e) {
      if (!(e instanceof ManifestMovedError) || attempt >= 3) throw e;
      opts.log.info({ attempt }, e.message);
    }
  }
}

export interface RebalanceDispatch {
  dataDir: string;
  portfolioId: string;
  catalog: Catalog;
  log: Log;
  redisUrl: string | null;
  prefix?: string;
  note?: (line: string) => void;
  timeoutMs?: number;
}

/** Recomputes one portfolio on the snapshot current at publish time: in-process, or as a job. */
export async function dispatchRebalance(opts: RebalanceDispatch): Promise<DispatchResult> {
  await opts.catalog.refresh();
  const lookup = catalogLookup(opts.catalog);
  if (!opts.redisUrl) {
    const meta = await rebalanceOne({ dataDir: opts.dataDir, log: opts.log, portfolioId: opts.portfolioId, lookup });
    return { snapshotId: meta.id, totalMs: meta.timingsMs.total };
  }
  // The same definition asked for twice is one job; a changed one is a new job.
  const definitionVersion = versionOf(lookup(opts.portfolioId) ?? { published: opts.portfolioId, base: readManifest(opts.dataDir)?.snapshotId ?? null });
  const id = jobId("rebalance", definitionVersion, `portfolio-${opts.portfolioId}`);
  return viaQueue({ ...opts, sourceDir: "" }, "rebalance", { portfolioId: opts.portfolioId, definitionVersion }, id);
}

/** Adds the job (or the flow whose parent is the job) with the given id. */
type Adder = (queue: Queue) => Promise<Job>;

async function viaQueue(opts: Omit<DispatchOptions, "sourceDir" | "catalog"> & { sourceDir: string }, stage: Stage, data: object, id: string, add?: Adder): Promise<DispatchResult> {
  const addJob: Adder = add ?? ((q) => q.add(stage, data, { jobId: id }));
  const queue = pipelineQueue(opts.redisUrl!, opts.prefix);
  try {
    // ioredis queues commands while Redis is away: bound the enqueue too, not only the wait.
    const limit = Math.min(ENQUEUE_TIMEOUT_MS, opts.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    const enq = await Promise.race([
      enqueueIdempotent(queue, id, opts.dataDir, () => addJob(queue)),
      new Promise<never>((_, rej) => setTimeout(() => rej(new Error(`no answer within ${limit / 1000} s`)), limit).unref()),
    ]);
    if (enq.joined === "done") return { ...(enq.job.returnvalue as JobResult), skipped: true };
    if (enq.joined) opts.note?.(`an equal job ${id} is already queued or running; waiting for it`);
    return await awaitJob(queue, enq, {
      dataDir: opts.dataDir,
      // A flow's parent publishes the run.
      kind: stage === "publish" ? "run" : (stage as PublishKind),
      timeoutMs: opts.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      onNote: opts.note ?? ((line) => opts.log.info({ job: id }, line)),
      onProgress: (p: JobProgress) => opts.progress?.(p.stage, p.done, p.total),
      reenqueue: () => addJob(queue),
      // A flow lives in Redis only (its children, who adds what): once its parent is lost nothing
      // will publish it, whatever its staging heartbeat says, so it is enqueued again at once.
      ...(stage === "publish" ? { progressOf: flowProgress, lostMeansGone: true } : {}),
    });
  } catch (e) {
    if (e instanceof JobFailedError) throw e;
    throw new JobFailedError(`could not queue the job on Redis: ${(e as Error).message}`);
  } finally {
    await closeQuietly(queue);
  }
}
