// A BullMQ worker running pipeline jobs with the same stage code the in-process path uses, and
// the API's portfolio rebalances (jobs/queue/rebalance-requests.ts). Any number of these, on any machine
// that reaches the same Redis and mounts the same store and source paths, share the queue: a job
// killed with its worker is taken over by another once its lock lapses (stalled-job recovery),
// and publishing is guarded by the store's lock.
import { DelayedError, type Job, type Queue, UnrecoverableError, Worker } from "bullmq";
import { formatReject, SourceRejectedError } from "../../pipeline/sources/report.ts";
import { PortfolioNotFoundError } from "../../pipeline/stages/rebalance.ts";
import { pruneStore } from "../../pipeline/store/snapshot/snapshots.ts";
import { JobContractError, type JobData, type JobName, parseJobData, parseJobResult } from "../queue/contracts.ts";
import type { JobProgress, JobResult } from "../queue/job-types.ts";
import { closeQuietly, PIPELINE_QUEUE, pipelineQueue, redisConnection } from "../queue/queue.ts";
import { PROCESSORS } from "./processors/index.ts";
import type { JobProcessor, ProcessorContext, WorkerDeps } from "./processors/types.ts";

export type { WorkerDeps } from "./processors/types.ts";

/** The job's data parsed by its contract: data it refuses would fail the same way on every retry. */
function contractData(job: Job): JobData<JobName> {
  try {
    return parseJobData(job.name, job.data);
  } catch (e) {
    throw e instanceof JobContractError ? new UnrecoverableError(e.message) : e;
  }
}

/** Sends progress at most every 250 ms (and on every stage change); a lost job's update is dropped. */
function progressReporter(job: Job, onStage: (s: string) => void) {
  let last = 0;
  let stage = "";
  return (s: string, done: number, total: number) => {
    const now = Date.now();
    if (s === stage && now - last < 250 && done !== total) return;
    if (s !== stage) onStage(s);
    stage = s;
    last = now;
    const p: JobProgress = { stage: s, done, total };
    // Redis restarted without persistence: "Missing key for job". The run goes on; the dispatcher
    // finds its publish in the store.
    job.updateProgress(p).catch(() => undefined);
  };
}

type Outcome = JobResult | { done: string };
type RunJob = (job: Job, token?: string, signal?: AbortSignal) => Promise<Outcome>;

/** What a processor's error becomes: failures that stay wrong on retry are made unrecoverable. */
function jobFailure(e: unknown, stage: string, signal?: AbortSignal): unknown {
  // A result outside its contract is a bug of this version: a retry would return it again.
  if (e instanceof JobContractError) return new UnrecoverableError(e.message);
  if (e instanceof DelayedError) return e; // put back for another worker (flow-worker.ts): not a failure
  // Cancelled (Worker.cancelJob): stopped at a stage boundary, and not retried.
  if (signal?.aborted) return new UnrecoverableError(`cancelled in stage ${stage}: ${String(signal.reason ?? "")}`);
  // What stays wrong on retry fails at once, with the report in the reason.
  if (e instanceof SourceRejectedError)
    return new UnrecoverableError(`${e.message}\n${e.rejects.slice(0, 50).map(formatReject).join("\n")}`);
  if (e instanceof PortfolioNotFoundError) return new UnrecoverableError(e.message);
  if (e instanceof Error && !(e instanceof UnrecoverableError)) e.message = `stage ${stage}: ${e.message}`;
  return e;
}

/** Runs one job through its processor, its data and result checked by their contracts. */
function jobRunner(deps: WorkerDeps, queue: () => Queue): RunJob {
  return async (job, token, signal) => {
    let stage = job.name;
    const progress = progressReporter(job, (s) => (stage = s));
    try {
      const data = contractData(job);
      const ctx: ProcessorContext = { deps, progress, token, signal, queue };
      const processor = PROCESSORS[job.name as JobName] as JobProcessor<JobName>;
      // The result as its contract says before BullMQ stores it: what a waiting command reads back.
      return parseJobResult(job.name, await processor(job, data, ctx));
    } catch (e) {
      throw jobFailure(e, stage, signal);
    }
  };
}

/** Records each job's CPU milliseconds in cpuOf (one job at a time per worker: the process's CPU is the job's). */
function cpuTimed(run: RunJob, cpuOf: Map<string, number>): RunJob {
  // Three parameters: BullMQ passes the job's AbortSignal only to a processor that declares it.
  return async (job, token, signal) => {
    const cpu0 = process.cpuUsage();
    let delayed = false; // put back for another worker: no completed or failed event will take its entry
    try {
      return await run(job, token, signal);
    } catch (e) {
      delayed = e instanceof DelayedError;
      throw e;
    } finally {
      const c = process.cpuUsage(cpu0);
      if (!delayed) cpuOf.set(job.id!, Math.round((c.user + c.system) / 1000));
    }
  };
}

/** One log line per failed or completed job, the completed one with its wall and CPU time. */
function logOutcomes(worker: Worker, log: WorkerDeps["log"], cpuOf: Map<string, number>): void {
  worker.on("failed", (job, err) => {
    if (job) cpuOf.delete(job.id!);
    log.warn({ job: job?.id, attempt: job?.attemptsMade, err: err.message.split("\n")[0] }, "pipeline job failed");
  });
  worker.on("completed", (job, r: Outcome) => {
    const cpuMs = cpuOf.get(job.id!);
    cpuOf.delete(job.id!);
    log.info(
      {
        job: job.id,
        ms: (job.finishedOn ?? Date.now()) - (job.processedOn ?? Date.now()),
        cpuMs,
        ...("snapshotId" in r ? { snapshot: r.snapshotId } : {}),
      },
      "pipeline job completed",
    );
  });
}

export function startPipelineWorker(deps: WorkerDeps): Worker {
  // CPU milliseconds of each job, logged when it completes: what a flow's job costs whatever the machine's load.
  const cpuOf = new Map<string, number>();
  // The queue handle of what jobs read or add on the queue themselves (a flow's parent, its children):
  // one Redis connection for the worker's life, opened on first use.
  let queue: Queue | null = null;
  const sharedQueue = () => (queue ??= pipelineQueue(deps.redisUrl, deps.prefix));
  const worker = new Worker(PIPELINE_QUEUE, cpuTimed(jobRunner(deps, sharedQueue), cpuOf), {
    connection: redisConnection(deps.redisUrl),
    // One job at a time per worker: a run is CPU-bound and publishes a whole snapshot.
    concurrency: 1,
    prefix: deps.prefix,
    lockDuration: deps.lockDurationMs ?? 30_000,
    stalledInterval: deps.stalledIntervalMs ?? 15_000,
    // A job whose worker died twice (e.g. killed by the OOM killer each time) fails instead of looping.
    maxStalledCount: 2,
  });
  worker.on("closed", () => {
    if (queue) void closeQuietly(queue);
    queue = null;
  });
  logOutcomes(worker, deps.log, cpuOf);
  // Without a listener an 'error' (Redis gone, a lock not renewed) would crash the process. The
  // caller logs them once per outage (logErrorsOncePerOutage): ioredis retries every second or two.
  worker.on("error", () => undefined);
  // BullMQ's worker says 'ready' only once; its connections say it again after each reconnect,
  // which is what ends an outage in the log.
  worker.backend.on("ready", () => worker.emit("ready"));
  // Staging folders of runs that died (this machine's or another's) go now rather than at the next publish.
  pruneStore(deps.dataDir).then(
    (removed) => removed.length && deps.log.info({ removed }, "pruned what dead runs and old snapshots left"),
    (e) => deps.log.warn({ err: String(e) }, "startup prune failed"),
  );
  return worker;
}
