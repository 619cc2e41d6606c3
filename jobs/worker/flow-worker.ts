// What a worker does around each job of a run's flow (jobs/queue/flow.ts); the jobs themselves are in
// jobs/worker/processors/{ingest,fundamentals,partition,backtest,step,publish}.ts. Every job finds
// the run's staging folder by the source version and flow id in its data. While a job runs it keeps
// the folder's heartbeat fresh; the heartbeat names no process (a flow has many, on many machines),
// so prune judges it by age alone and spares the folder between jobs for the stale time (2 minutes).

import { randomBytes } from "node:crypto";
import { hostname } from "node:os";
import { DelayedError, type Job, UnrecoverableError } from "bullmq";
import type { z } from "zod";
import { RunLifecycle } from "../../pipeline/run/lifecycle.ts";
import {
  buildRunPlan,
  PARTITIONED_STEPS,
  type PartitionedName,
  type PartitionedStep,
  type PartitionInput,
  partitionsAfter,
  type WholeStep,
} from "../../pipeline/run/plan.ts";
import { UniverseCache } from "../../pipeline/run/universe-cache.ts";
import { SourceRejectedError } from "../../pipeline/sources/report.ts";
import { LevelsCache } from "../../pipeline/stages/metrics-partition.ts";
import { serviceConfig } from "../config.ts";
import { afterRunPublish } from "../local/after-publish.ts";
import { JOB_CONTRACTS, type JobData, type JobResultOf } from "../queue/contracts.ts";
import {
  AFFINITY_MS,
  addFlowChildren,
  type BacktestData,
  FLOW_JOBS,
  type FlowChildren,
  type FlowJobName,
  flowStagingId,
  type PartitionLists,
  runFlowIds,
} from "../queue/flow.ts";
import type { JobProcessor, ProcessorContext, WorkerDeps } from "./processors/types.ts";

export type FlowDeps = Pick<WorkerDeps, "redisUrl" | "prefix" | "dataDir" | "catalog" | "log">;

/** What a flow job's step gets besides its data: the run's lifecycle (pipeline/run/lifecycle.ts), its folder and id. */
export interface FlowContext extends ProcessorContext {
  run: RunLifecycle;
  out: string;
  stagingId: string;
  /** What this worker process keeps between its jobs of a run (PROCESS_STATE). */
  universes: UniverseCache;
  levels: LevelsCache;
}

export type FlowStep<N extends FlowJobName> = (job: Job, data: JobData<N>, f: FlowContext) => Promise<JobResultOf<N>>;

/** A flow job runs on one core: DuckDB threads of a worker process (PIPELINE_WORKER_THREADS, default 1). */
export function workerThreads(): number {
  return serviceConfig().workerThreads;
}

export const tickersPerPartition = () => serviceConfig().tickersPerPartition;

/**
 * The flow this job belongs to is over: its parent is gone (Redis lost it; or it was added again
 * as another flow, `run` differs) or failed (another child failed for good). Redis unreachable: not known, false.
 */
async function flowGone(job: Job, run: string, ctx: ProcessorContext): Promise<boolean> {
  if (!job.parent?.id) return false;
  try {
    const parent = await ctx.queue().getJob(job.parent.id);
    if (!parent) return true;
    const parentData = JOB_CONTRACTS.publish.data.safeParse(parent.data);
    if (!parentData.success || parentData.data.run !== run) return true;
    return (await parent.getState()) === "failed";
  } catch {
    return false;
  }
}

/** The run's staging folder and heartbeat, removed once its flow cannot publish. */
function dropStaging(f: FlowContext, why: string, job: Job): void {
  f.run.discard();
  f.deps.log.info({ job: job.id, staging: f.stagingId }, `run's staging folder removed: ${why}`);
}

/** This failure ends the flow: not retried (unrecoverable, or the last attempt). */
function lastFailure(job: Job, e: unknown): boolean {
  return (
    e instanceof UnrecoverableError ||
    e instanceof SourceRejectedError ||
    job.attemptsMade + 1 >= (job.opts.attempts ?? 1)
  );
}

/** This process among a flow's workers (BacktestData.affinity). */
export const WORKER = `${hostname()}:${process.pid}:${randomBytes(4).toString("hex")}`;

/**
 * What this process keeps between its flow jobs of one run (the affinity above is the process's, so
 * is the universe): the universe its ingest builds and its backtests read, the benchmark levels its
 * backtests and stock metric partitions read.
 */
const PROCESS_STATE = { universes: new UniverseCache(), levels: new LevelsCache() };

/** Whether this worker leaves a backtest to the worker its data names (processors/backtest.ts). */
export function leaveBacktest(
  data: Pick<BacktestData, "affinity" | "affinityMs">,
  here: { worker: string; holdsUniverse: boolean; ageMs: number },
): boolean {
  return (
    !!data.affinity &&
    data.affinity !== here.worker &&
    !here.holdsUniverse &&
    here.ageMs <= (data.affinityMs ?? AFFINITY_MS)
  );
}

export interface FlowJobOptions<N extends FlowJobName> {
  /** Put the job back for another worker (DelayedError) before anything else, when this says so. */
  leave?: (job: Job, data: JobData<N>, f: FlowContext) => Promise<boolean>;
  /** This job reads the universe the worker may hold in memory; every other job releases it. */
  usesUniverse?: boolean;
}

/**
 * A flow job's processor: a leftover child of a flow that failed or was lost only clears its folder;
 * otherwise `step` runs holding the staging heartbeat, and a failure that ends the flow removes the folder.
 */
export function inFlow<N extends FlowJobName>(
  name: N,
  step: FlowStep<N>,
  opts: FlowJobOptions<N> = {},
): JobProcessor<N> {
  return async (job, data, ctx) => {
    const { deps } = ctx;
    const ids = runFlowIds(data.sourceVersion);
    const stagingId = flowStagingId(data);
    const run = RunLifecycle.join(
      {
        dataDir: deps.dataDir,
        job: ids.parent,
        log: deps.log,
        afterPublish: afterRunPublish({ ...deps, job: job.id }),
      },
      stagingId,
    );
    const f: FlowContext = { ...ctx, run, out: run.out, stagingId, ...PROCESS_STATE };
    if (opts.leave && (await opts.leave(job, data, f))) throw new DelayedError();
    const child = name !== FLOW_JOBS.parent;
    // A leftover child of a flow that failed or was lost does nothing but clear its folder.
    if (child && (await flowGone(job, data.run, ctx))) {
      dropStaging(f, "its flow failed or was lost", job);
      // a child's result is `done` (the parent's name is excluded above)
      return { done: job.id! } as JobResultOf<N>;
    }
    run.hold();
    if (!opts.usesUniverse) f.universes.release(run.out);
    try {
      return await step(job, data, f);
    } catch (e) {
      // The flow fails with this job: nothing will publish the folder, so it goes now, not 2 minutes later.
      if (lastFailure(job, e)) {
        run.close();
        dropStaging(f, `${job.id} failed for good`, job);
      } else if (child && (await flowGone(job, data.run, ctx))) {
        run.close();
        dropStaging(f, "its flow failed or was lost", job);
      }
      throw e;
    } finally {
      run.close();
    }
  };
}

/** Adds children to this job's parent (the flow), unless the flow is over. */
export async function addChildren(
  job: Job,
  data: JobData<"ingest" | "fundamentals">,
  f: FlowContext,
  c: Omit<FlowChildren, "done">,
): Promise<void> {
  // Lost meanwhile (Redis restarted empty; maybe added again as another flow): add nothing to it.
  if (await flowGone(job, data.run, f))
    throw new UnrecoverableError(`the run's flow ${job.parent!.id} failed or was lost while ${job.id} ran`);
  const out = f.out;
  const done = (name: PartitionedName, input: PartitionInput<PartitionedName>) =>
    (PARTITIONED_STEPS[name] as PartitionedStep<z.ZodObject>).done(out, input);
  await addFlowChildren(
    f.queue(),
    { id: job.parent!.id!, queueKey: job.parent!.queueKey },
    { sourceDir: data.sourceDir, sourceVersion: data.sourceVersion, run: data.run },
    { ...c, done },
  );
}

/**
 * The partitions of every partitioned step that follows `after` in a full run's plan, as the records
 * `after` left in the staging folder list them; `except`: steps it added already.
 */
export function partitionsListed(out: string, after: WholeStep, except: PartitionedName[] = []): PartitionLists {
  const names = partitionsAfter(buildRunPlan("full"), after).filter((n) => !except.includes(n));
  return Object.fromEntries(names.map((n) => [n, PARTITIONED_STEPS[n].partitions(out)]));
}
