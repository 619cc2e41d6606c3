// `npm run pipeline -- status`: the published snapshot and, with Redis, the queue: counts per
// state, the jobs running (with their progress), connected workers and the nightly scheduler.
import { liveStagings, readManifest, readMeta } from "../pipeline/store/snapshots.ts";
import { closeQuietly, NIGHTLY_SCHEDULER, pipelineQueue } from "./queue.ts";

export interface Status {
  snapshot: Record<string, unknown> | null;
  /** Staging folders of runs alive now (on any machine sharing the store). */
  staging: { id: string; job?: string }[];
  queue?: {
    counts: Record<string, number>;
    workers: number;
    running: { id: string | undefined; name: string; attempt: number; startedAt: string | null; progress: unknown }[];
    scheduler: { pattern?: string | null; tz?: string | null; next: string | null } | null;
  };
}

export async function gatherStatus(
  dataDir: string,
  redisUrl: string | null,
  prefix?: string,
  timeoutMs = 10_000,
): Promise<Status> {
  const m = readManifest(dataDir);
  const meta = m ? readMeta(dataDir, m.snapshotId) : null;
  const status: Status = {
    snapshot:
      m && meta
        ? {
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
          }
        : null,
    staging: liveStagings(dataDir),
  };
  if (!redisUrl) return status;
  const queue = pipelineQueue(redisUrl, prefix);
  try {
    const read = async () => {
      const [counts, workers, active, scheduler] = await Promise.all([
        queue.getJobCounts("waiting", "active", "delayed", "prioritized", "completed", "failed"),
        queue.getWorkersCount(),
        queue.getActive(),
        queue.getJobScheduler(NIGHTLY_SCHEDULER),
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
      };
    };
    status.queue = await Promise.race([
      read(),
      new Promise<never>((_, rej) =>
        setTimeout(() => rej(new Error(`Redis did not answer within ${timeoutMs / 1000} s`)), timeoutMs).unref(),
      ),
    ]);
    return status;
  } finally {
    await closeQuietly(queue);
  }
}
