// A BullMQ worker running pipeline jobs with the same stage code the in-process path uses, and
// the API's portfolio rebalances (jobs/rebalance-requests.ts). Any number of these, on any machine
// that reaches the same Redis and mounts the same store and source paths, share the queue: a job
// killed with its worker is taken over by another once its lock lapses (stalled-job recovery),
// and publishing is guarded by the store's lock.
import { DelayedError, type Job, UnrecoverableError, Worker } from "bullmq";
import { mayBeBuiltFrom } from "../pipeline/sources/append-plan.ts";
import { sourceFingerprint, sourceStamp } from "../pipeline/sources/fingerprint.ts";
import { formatReject, SourceRejectedError } from "../pipeline/sources/report.ts";
import type { Log } from "../pipeline/stages/context.ts";
import { PortfolioNotFoundError } from "../pipeline/stages/rebalance.ts";
import type { Catalog } from "../pipeline/store/catalog/catalog.ts";
import { pruneStore, readManifest, snapshotDir } from "../pipeline/store/snapshots.ts";
import { enqueueIdempotent } from "./enqueue.ts";
import { addRunFlow, FLOW_JOBS, flowByDefault, runFlowIds } from "./flow.ts";
import { processFlowJob } from "./flow-worker.ts";
import type { BackfillJobData, JobProgress, JobResult, RebalanceJobData, RunJobData } from "./job-types.ts";
import { continuesPublished } from "./published-record.ts";
import { closeQuietly, PIPELINE_QUEUE, pipelineQueue, redisConnection } from "./queue.ts";
import { noteRebalanceFailure, runRebalance } from "./rebalance-requests.ts";
import { runPipeline } from "./runner.ts";

const FLOW_JOB_NAMES = new Set<string>(Object.values(FLOW_JOBS));

export interface WorkerDeps {
  redisUrl: string;
  dataDir: string;
  catalog: Catalog;
  log: Log;
  prefix?: string;
  /**
   * Stalled-job recovery: a job whose worker stopped renewing its lock for `lockDurationMs` is
   * handed to another worker at the next check (every `stalledIntervalMs`). The lock is renewed
   * from the event loop, so it must outlast the longest synchronous stretch of a stage.
   */
  lockDurationMs?: number;
  stalledIntervalMs?: number;
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

/** Adds the run's flow (or joins an equal one queued or running); the flow publishes on its own. */
async function startFlow(deps: WorkerDeps, sourceDir: string): Promise<{ done: string }> {
  const sourceVersion = sourceStamp(sourceDir);
  const id = runFlowIds(sourceVersion).parent;
  const queue = pipelineQueue(deps.redisUrl, deps.prefix);
  try {
    const enq = await enqueueIdempotent(queue, id, deps.dataDir, () => addRunFlow(queue, { sourceDir, sourceVersion }));
    deps.log.info({ flow: id, joined: enq.joined }, "scheduled run enqueued as a flow");
    return { done: `flow ${id}` };
  } finally {
    await closeQuietly(queue);
  }
}

export function startPipelineWorker(deps: WorkerDeps): Worker {
  // CPU seconds of each job (one at a time per worker: the process's CPU is the job's), logged
  // when it completes: what a flow's job costs whatever the machine's load.
  const cpuOf = new Map<string, number>();
  const processJob = async (job: Job, token?: string): Promise<JobResult | { done: string }> => {
    const cpu0 = process.cpuUsage();
    let delayed = false; // put back for another worker: no completed or failed event will take its entry
    try {
      return await runJob(job, token);
    } catch (e) {
      delayed = e instanceof DelayedError;
      throw e;
    } finally {
      const c = process.cpuUsage(cpu0);
      if (!delayed) cpuOf.set(job.id!, Math.round((c.user + c.system) / 1000));
    }
  };
  const runJob = async (job: Job, token?: string): Promise<JobResult | { done: string }> => {
    let stage = job.name;
    const progress = progressReporter(job, (s) => (stage = s));
    try {
      if (job.name === "run" || job.name === "backfill") {
        const data = job.data as RunJobData | BackfillJobData;
        // A scheduled run carries no version: an unchanged nightly source republishes nothing.
        const current = readManifest(deps.dataDir);
        if (
          job.name === "run" &&
          !data.sourceVersion &&
          current &&
          mayBeBuiltFrom(snapshotDir(deps.dataDir, current.snapshotId), current.sourceId, data.sourceDir) &&
          current.sourceId === sourceFingerprint(data.sourceDir)
        )
          return { snapshotId: current.snapshotId, totalMs: 0 };
        // A scheduled run becomes a flow that every worker shares (this job only adds it), unless
        // the source only added days: then this job continues the published snapshot itself.
        if (
          job.name === "run" &&
          !data.sourceVersion &&
          flowByDefault() &&
          !(await continuesPublished(deps.dataDir, data.sourceDir))
        )
          return await startFlow(deps, data.sourceDir);
        const { meta } = await runPipeline({
          dataDir: deps.dataDir,
          sourceDir: data.sourceDir,
          window: "window" in data ? data.window : undefined,
          catalog: deps.catalog,
          log: deps.log,
          progress,
          job: job.id,
        });
        return { snapshotId: meta.id, totalMs: meta.timingsMs.total };
      }
      if (job.name === "rebalance") {
        const data = job.data as RebalanceJobData;
        await deps.catalog.refresh();
        progress("rebalance", 0, 1);
        const meta = await runRebalance(deps, data.portfolioId, job.id);
        return { snapshotId: meta.id, totalMs: meta.timingsMs.total };
      }
      if (FLOW_JOB_NAMES.has(job.name)) return await processFlowJob(job, deps, progress, token);
      throw new UnrecoverableError(`unknown job ${job.name}`);
    } catch (e) {
      if (e instanceof DelayedError) throw e; // put back for another worker (flow-worker.ts): not a failure
      // What stays wrong on retry fails at once, with the report in the reason.
      if (e instanceof SourceRejectedError)
        throw new UnrecoverableError(`${e.message}\n${e.rejects.slice(0, 50).map(formatReject).join("\n")}`);
      if (e instanceof PortfolioNotFoundError) throw new UnrecoverableError(e.message);
      if (job.name === "rebalance" && job.attemptsMade + 1 >= (job.opts.attempts ?? 1)) {
        const data = job.data as RebalanceJobData;
        await noteRebalanceFailure(deps, data.portfolioId, data.requestedAt ?? null, e);
      }
      if (e instanceof Error && !(e instanceof UnrecoverableError)) e.message = `stage ${stage}: ${e.message}`;
      throw e;
    }
  };
  const worker = new Worker(PIPELINE_QUEUE, processJob, {
    connection: redisConnection(deps.redisUrl),
    // One job at a time per worker: a run is CPU-bound and publishes a whole snapshot.
    concurrency: 1,
    prefix: deps.prefix,
    lockDuration: deps.lockDurationMs ?? 30_000,
    stalledInterval: deps.stalledIntervalMs ?? 15_000,
    // A job whose worker died twice (e.g. killed by the OOM killer each time) fails instead of looping.
    maxStalledCount: 2,
  });
  worker.on("failed", (job, err) => {
    if (job) cpuOf.delete(job.id!);
    deps.log.warn({ job: job?.id, attempt: job?.attemptsMade, err: err.message.split("\n")[0] }, "pipeline job failed");
  });
  worker.on("completed", (job, r: JobResult | { done: string }) => {
    const cpuMs = cpuOf.get(job.id!);
    cpuOf.delete(job.id!);
    deps.log.info(
      {
        job: job.id,
        ms: (job.finishedOn ?? Date.now()) - (job.processedOn ?? Date.now()),
        cpuMs,
        ...("snapshotId" in r ? { snapshot: r.snapshotId } : {}),
      },
      "pipeline job completed",
    );
  });
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
