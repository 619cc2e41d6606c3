// One entry point for "run the pipeline on this source": in-process without Redis, as a BullMQ
// job with it (any worker may take it; this process waits for the outcome).
import type { Queue } from "bullmq";
import type { Log } from "../pipeline/stages/context.ts";
import type { Catalog } from "../pipeline/store/catalog/catalog.ts";
import { pipelineEvents, pipelineQueue, NIGHTLY_SCHEDULER, type RunJobResult } from "./queue.ts";
import { runPipeline } from "./runner.ts";
import type { DateWindow } from "../pipeline/stages/backfill.ts";

export interface DispatchOptions {
  dataDir: string;
  sourceDir: string;
  catalog: Catalog;
  log: Log;
  redisUrl: string | null;
  prefix?: string;
  progress?: (stage: string, done: number, total: number) => void;
  window?: DateWindow;
}

export class JobFailedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "JobFailedError";
  }
}

export async function dispatchRun(opts: DispatchOptions): Promise<RunJobResult> {
  if (!opts.redisUrl) {
    const { meta } = await runPipeline(opts);
    return { snapshotId: meta.id, totalMs: meta.timingsMs.total };
  }
  const queue = pipelineQueue(opts.redisUrl, opts.prefix);
  const events = pipelineEvents(opts.redisUrl, opts.prefix);
  try {
    await events.waitUntilReady();
    if ((await queue.getWorkersCount()) === 0) opts.log.warn({}, "no pipeline worker is connected yet; the job waits for one (npm run pipeline -- worker)");
    const job = await queue.add("run", { sourceDir: opts.sourceDir, window: opts.window }, { removeOnComplete: 100, removeOnFail: 100 });
    if (opts.progress) events.on("progress", ({ jobId, data }) => jobId === job.id && typeof data === "object" && opts.progress!((data as { stage: string }).stage, (data as { done: number }).done, (data as { total: number }).total));
    try {
      return (await job.waitUntilFinished(events)) as RunJobResult;
    } catch (e) {
      throw new JobFailedError(String((e as Error).message));
    }
  } finally {
    await events.close();
    await queue.close();
  }
}

/** Registers (or updates) the nightly job scheduler: one `run` of `sourceDir` on a cron pattern. */
export async function scheduleNightly(redisUrl: string, sourceDir: string, pattern = "0 2 * * *", prefix?: string): Promise<{ next: number | undefined }> {
  const queue: Queue = pipelineQueue(redisUrl, prefix);
  try {
    const job = await queue.upsertJobScheduler(NIGHTLY_SCHEDULER, { pattern, tz: "UTC" }, { name: "run", data: { sourceDir } });
    return { next: job?.timestamp !== undefined ? job.timestamp + (job.opts.delay ?? 0) : undefined };
  } finally {
    await queue.close();
  }
}
