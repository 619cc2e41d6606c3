// The queued side of jobs/queue/dispatch.ts: a request as an idempotent BullMQ job (or a flow of
// partition jobs) that this process waits for. Loaded only when REDIS_URL is set.
import type { Job, Queue } from "bullmq";
import type { PublishKind } from "../../pipeline/store/snapshot/snapshots.ts";
import { awaitJob, closeWithin, JobFailedError } from "./await-job.ts";
import type { JobData, JobName } from "./contracts.ts";
import { DEFAULT_TIMEOUT_MS, type DispatchOptions, type DispatchResult } from "./dispatch-options.ts";
import { enqueueIdempotent } from "./enqueue.ts";
import { addRunFlow, flowByDefault, flowProgress, runFlowIds } from "./flow.ts";
import { backfillVersion, type JobProgress, type JobResult, jobId, type Stage, WHOLE } from "./job-types.ts";
import { addJob, pipelineQueue } from "./queue.ts";

const ENQUEUE_TIMEOUT_MS = 30_000;

/** A run (or backfill) of the source whose fingerprint is `sourceVersion`, as a queued job. */
export async function queueRun(opts: DispatchOptions, sourceVersion: string): Promise<DispatchResult> {
  // A run (a nightly append too: its ingest job decides) as a flow of partition jobs that any
  // number of workers share; a backfill is one job (docs/data/backfill-and-append.md).
  if (!opts.window && useFlow(opts)) {
    const ids = runFlowIds(sourceVersion);
    return viaQueue(opts, "publish", null, ids.parent, (q) =>
      addRunFlow(q, { sourceDir: opts.sourceDir, sourceVersion }),
    );
  }
  const stage: Stage = opts.window ? "backfill" : "run";
  const id = jobId(stage, opts.window ? backfillVersion(sourceVersion, opts.window) : sourceVersion, WHOLE);
  const data = {
    sourceDir: opts.sourceDir,
    sourceVersion,
    partition: WHOLE,
    ...(opts.window ? { window: opts.window } : {}),
  };
  return viaQueue(opts, stage, data, id);
}

/** The flow unless told otherwise (`flow: false`, or PIPELINE_FLOW=0: the single `run` job). */
function useFlow(opts: DispatchOptions): boolean {
  return opts.flow ?? flowByDefault();
}

/** Adds the job (or the flow whose parent is the job) with the given id. */
type Adder = (queue: Queue) => Promise<Job>;

/** The job `stage` with its contract's data, or (data null) the flow `add` adds, whose parent is `stage`. */
export async function viaQueue<N extends JobName>(
  opts: Omit<DispatchOptions, "sourceDir" | "catalog"> & { sourceDir: string },
  stage: N,
  data: JobData<N> | null,
  id: string,
  add?: Adder,
): Promise<DispatchResult> {
  const adder: Adder =
    add ??
    ((q) => {
      if (!data) throw new Error(`no data for the ${stage} job ${id}`);
      return addJob(q, stage, data, { jobId: id });
    });
  const queue = pipelineQueue(opts.redisUrl!, opts.prefix);
  try {
    // ioredis queues commands while Redis is away: bound the enqueue too, not only the wait. The
    // command's timeout counts from here: the enqueue's time is taken off the wait's.
    const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const deadline = Date.now() + timeoutMs;
    const limit = Math.min(ENQUEUE_TIMEOUT_MS, timeoutMs);
    const enq = await Promise.race([
      enqueueIdempotent(queue, id, opts.dataDir, () => adder(queue), opts.force),
      new Promise<never>((_, rej) =>
        setTimeout(() => rej(new Error(`no answer within ${limit / 1000} s`)), limit).unref(),
      ),
    ]);
    if (enq.joined === "done") return { ...(enq.job.returnvalue as JobResult), skipped: true };
    if (enq.joined) opts.note?.(`an equal job ${id} is already queued or running; waiting for it`);
    return await awaitJob(queue, enq, {
      dataDir: opts.dataDir,
      // A flow's parent publishes the run.
      kind: stage === "publish" ? "run" : (stage as PublishKind),
      timeoutMs,
      deadline,
      onNote: opts.note ?? ((line) => opts.log.info({ job: id }, line)),
      onProgress: (p: JobProgress) => opts.progress?.(p.stage, p.done, p.total),
      reenqueue: () => adder(queue),
      // A flow lives in Redis only (its children, who adds what): once its parent is lost nothing
      // will publish it, whatever its staging heartbeat says, so it is enqueued again at once.
      ...(stage === "publish" ? { progressOf: flowProgress, lostMeansGone: true } : {}),
    });
  } catch (e) {
    if (e instanceof JobFailedError) throw e;
    throw new JobFailedError(`could not queue the job on Redis: ${(e as Error).message}`);
  } finally {
    await closeWithin(queue);
  }
}
