// What a processor of one job kind gets: the job's data parsed by its contract (jobs/queue/contracts.ts),
// the worker's dependencies, and the worker's one queue handle for what a job reads or adds on the
// queue itself (its flow's parent, children): one Redis connection per worker, not one per call.
import type { Job, Queue } from "bullmq";
import type { Log, StageContext } from "../../../pipeline/stages/context.ts";
import type { Catalog } from "../../../pipeline/store/catalog/catalog.ts";
import type { JobData, JobName, JobResultOf } from "../../queue/contracts.ts";
import type { EventSink } from "../../webhooks/event-sink.ts";

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
  /**
   * Rebalance jobs run in a process of their own (jobs/local/rebalance-child.ts): set by `npm start`, whose
   * worker shares its process with the HTTP server.
   */
  rebalanceInChild?: boolean;
  /** The webhook events step, after each publish and on a rebalance failed for good (jobs/webhooks/event-sink.ts). */
  events?: EventSink;
}

export type Progress = StageContext["progress"];

export interface ProcessorContext {
  deps: WorkerDeps;
  progress: NonNullable<Progress>;
  /** The job's lock token (for moveToDelayed). */
  token?: string;
  /** Aborted when the job is cancelled (Worker.cancelJob): the job stops at its next stage boundary. */
  signal?: AbortSignal;
  /** The worker's queue (opened once, on first use; closed with the worker). */
  queue(): Queue;
}

export type JobProcessor<N extends JobName> = (
  job: Job,
  data: JobData<N>,
  ctx: ProcessorContext,
) => Promise<JobResultOf<N>>;

/** One processor per job name: a name without one is a type error. */
export type ProcessorTable = { [N in JobName]: JobProcessor<N> };
