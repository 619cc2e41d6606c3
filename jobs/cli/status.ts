// `npm run pipeline -- status`: the published snapshot and, with Redis, the queue: counts per
// state, the jobs running (with their progress), connected workers and the nightly scheduler.
import type { Job, Queue } from "bullmq";
import { liveStagings, readManifest, readMeta } from "../../pipeline/store/snapshot/snapshots.ts";
import { parseJobData } from "../queue/contracts.ts";
import { FLOW_JOBS, runFlowIds } from "../queue/flow.ts";
import { closeQuietly, NIGHTLY_SCHEDULER, pipelineQueue } from "../queue/queue.ts";

/**
 * A run's flow, counted over all its jobs: BullMQ's counts miss them (a finished child is removed at
 * once), and each job's own progress is one partition's. Ingest and fundamentals add the partition
 * jobs, so the total is known, and `progress` given, once both are done: it never goes backwards.
 */
export interface RunStatus {
  id: string;
  state: string;
  jobs: { done: number; known: number; allKnown: boolean };
  /** done / known once every job is known (0..1), else null. */
  progress: number | null;
}

export interface Status {
  snapshot: Record<string, unknown> | null;
  /** Staging folders of runs alive now (on any machine sharing the store). */
  staging: { id: string; job?: string }[];
  queue?: {
    counts: Record<string, number>;
    workers: number;
    running: { id: string | undefined; name: string; attempt: number; startedAt: string | null; progress: unknown }[];
    scheduler: { pattern?: string | null; tz?: string | null; next: string | null } | null;
    /** Runs queued or running, then the last finished one. */
    runs: RunStatus[];
  };
}

async function runStatus(job: Job, state: string): Promise<RunStatus> {
  const d = await job.getDependencies();
  const processed = Object.keys(d.processed ?? {});
  const unprocessed = d.unprocessed ?? [];
  const ids = runFlowIds(parseJobData("publish", job.data).sourceVersion);
  // Keys are `<prefix>:<queue>:<job id>`.
  const adders = [ids.ingest, ids.fundamentals];
  const allKnown = state === "completed" || !unprocessed.some((k) => adders.some((id) => k.endsWith(`:${id}`)));
  const done = processed.length;
  const known = done + unprocessed.length;
  return {
    id: job.id!,
    state,
    jobs: { done, known, allKnown },
    progress: state === "completed" ? 1 : allKnown && known ? done / known : null,
  };
}

async function runsOf(queue: Queue): Promise<RunStatus[]> {
  const open = (await queue.getJobs(["active", "waiting-children", "waiting", "delayed"])).filter(
    (j) => j?.name === FLOW_JOBS.parent,
  );
  const last = (await queue.getCompleted(0, 50)).filter((j) => j?.name === FLOW_JOBS.parent).slice(0, 1);
  return Promise.all([
    ...open.map(async (j) => runStatus(j, await j.getState())),
    ...last.map((j) => runStatus(j, "completed")),
  ]);
}

export async function gatherStatus(
  dataDir: string,
  redisUrl: string | null,
  prefix?: string,
  timeoutMs = 10_000,
): Promise<Status> {
  const status: Status = { snapshot: publishedStatus(dataDir), staging: liveStagings(dataDir) };
  if (!redisUrl) return status;
  const queue = pipelineQueue(redisUrl, prefix);
  try {
    status.queue = await Promise.race([
      queueStatus(queue),
      new Promise<never>((_, rej) =>
        setTimeout(() => rej(new Error(`Redis did not answer within ${timeoutMs / 1000} s`)), timeoutMs).unref(),
      ),
    ]);
    return status;
  } finally {
    await closeQuietly(queue);
  }
}

function publishedStatus(dataDir: string): Status["snapshot"] {
  const m = readManifest(dataDir);
  const meta = m ? readMeta(dataDir, m.snapshotId) : null;
  if (!m || !meta) return null;
  return {
    id: m.snapshotId,
    publishedAt: m.publishedAt,
    version: m.version ?? 0,
    source: meta.sourceDir,
    sourceId: meta.sourceId,
    lastPriceDate: meta.lastPriceDate,
    counts: meta.counts,
    timingsMs: meta.timingsMs,
    kept: m.history,
    recent: (m.log ?? []).slice(0, 5),
  };
}

async function queueStatus(queue: Queue): Promise<NonNullable<Status["queue"]>> {
  const [counts, workers, active, scheduler, runs] = await Promise.all([
    queue.getJobCounts("waiting", "active", "delayed", "prioritized", "completed", "failed"),
    queue.getWorkersCount(),
    queue.getActive(),
    queue.getJobScheduler(NIGHTLY_SCHEDULER),
    runsOf(queue),
  ]);
  return {
    counts,
    workers,
    running: active.map((j) => ({
      id: j.id,
      name: j.name,
      attempt: j.attemptsMade + 1,
      startedAt: j.processedOn ? new Date(j.processedOn).toISOString() : null,
      progress: j.progress,
    })),
    scheduler: scheduler
      ? {
          pattern: scheduler.pattern,
          tz: scheduler.tz,
          next: scheduler.next ? new Date(scheduler.next).toISOString() : null,
        }
      : null,
    runs,
  };
}
