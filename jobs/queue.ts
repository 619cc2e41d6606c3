// The pipeline queue: job names, payloads and the Redis connection. Stages know nothing of it.
import { Queue, QueueEvents, type ConnectionOptions } from "bullmq";

export const PIPELINE_QUEUE = "pipeline";
export const NIGHTLY_SCHEDULER = "nightly-run";

/** `window` makes the run a backfill of that date range. */
export type PipelineJob =
  | { name: "run"; data: { sourceDir: string; window?: { from: string; to: string } } }
  | { name: "rebalance"; data: { portfolioId: string } };

export interface RunJobResult {
  snapshotId: string;
  totalMs: number;
}

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
  return new Queue(PIPELINE_QUEUE, { connection: redisConnection(url), prefix });
}

export function pipelineEvents(url: string, prefix?: string): QueueEvents {
  return new QueueEvents(PIPELINE_QUEUE, { connection: redisConnection(url), prefix });
}
