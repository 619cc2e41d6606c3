// The pipeline queue: its name, default job options and the Redis connection. Stages know nothing of it.
import { type ConnectionOptions, type Job, type JobsOptions, Queue } from "bullmq";
import type { JobData, JobName } from "./contracts.ts";
import type { JobResult } from "./job-types.ts";

export const PIPELINE_QUEUE = "pipeline";
export const NIGHTLY_SCHEDULER = "nightly-run";

/** What a run or rebalance job returns. */
export type RunJobResult = JobResult;

/**
 * Retries with backoff for what may pass (a worker killed, Redis away, the manifest moved under a
 * backfill); a bad source or an unknown portfolio fails at once (UnrecoverableError in the worker).
 * Finished jobs stay a week so the same request made again joins its result instead of recomputing.
 */
export const JOB_DEFAULTS: JobsOptions = {
  attempts: 3,
  backoff: { type: "exponential", delay: 5_000 },
  removeOnComplete: { age: 7 * 24 * 3600, count: 1000 },
  removeOnFail: { age: 7 * 24 * 3600, count: 1000 },
};

/** BullMQ wants host/port options (its own ioredis), and maxRetriesPerRequest null for workers. */
export function redisConnection(url: string): ConnectionOptions {
  const u = new URL(url);
  return {
    host: u.hostname || "127.0.0.1",
    port: Number(u.port || 6379),
    username: u.username || undefined,
    password: u.password ? decodeURIComponent(u.password) : undefined,
    db: u.pathname.length > 1 ? Number(u.pathname.slice(1)) : 0,
    tls: u.protocol === "rediss:" ? {} : undefined,
    maxRetriesPerRequest: null,
  };
}

export function pipelineQueue(url: string, prefix?: string): Queue {
  const queue = new Queue(PIPELINE_QUEUE, {
    connection: redisConnection(url),
    prefix,
    defaultJobOptions: JOB_DEFAULTS,
  });
  // Connection errors are retried by ioredis and surface as timeouts where they matter.
  queue.on("error", () => undefined);
  return queue;
}

/**
 * Adds one job: a name of the contracts with its data (jobs/queue/contracts.ts). Every single job is added
 * through this (a flow's are added by jobs/queue/flow.ts under FLOW_JOBS names), so the types keep the
 * names and data the worker parses in step with what is enqueued.
 */
export function addJob<N extends JobName>(queue: Queue, name: N, data: JobData<N>, opts: JobsOptions): Promise<Job> {
  return queue.add(name, data, opts);
}

/** Closes without waiting forever on a Redis that is gone. */
export async function closeQuietly(
  c: { close(): Promise<void>; disconnect(): Promise<void> },
  ms = 2_000,
): Promise<void> {
  const closed = await Promise.race([
    c.close().then(
      () => true,
      () => false,
    ),
    new Promise<false>((res) => setTimeout(() => res(false), ms).unref()),
  ]);
  if (!closed) await c.disconnect().catch(() => undefined);
}
