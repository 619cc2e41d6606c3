// A run as a BullMQ flow: the parent `publish.<fp>.all` waits for its children — first
// `ingest.<fp>.all` and `fundamentals.<fp>.all`, side by side. Ingest (once the source is staged
// and the partitions are known) adds `analytics.<fp>.tickers-NNNN` per ticker range and
// `backtest.<fp>.portfolio-<id>` per portfolio; fundamentals splits the fundamentals files by
// ticker range and adds `financials.<fp>.tickers-NNNN` per range — all to the same parent. Every other
// whole step of the plan is a `step.<fp>.<step>` job added by the job of the step it waits for, or runs
// in the publish job before it publishes, as the merge does (wholeStepPlacement). Every
// job of a run shares its staging folder on the store, named from the source version and the
// flow's own id: job data is plain JSON, so any worker on any machine mounting the store may take
// any job, and equal ids dedupe across dispatchers. A nightly append is the same flow: its ingest
// stages the new days, then adds one `analytics` job per published returns part and `backtest.<fp>.all`,
// and the fundamentals job does nothing; whichever of the two comes first decides for both, once
// (the flow's decision record: jobs/worker/processors/append.ts).
import { randomBytes } from "node:crypto";
import { FlowProducer, type Job, type JobsOptions, type Queue } from "bullmq";
import type { z } from "zod";
import {
  buildRunPlan,
  PARTITIONED_NAMES,
  PARTITIONED_STEPS,
  type PartitionedName,
  type PartitionedStep,
  type PartitionInput,
  type RunPlan,
  WHOLE_STEPS,
  type WholeStep,
} from "../../pipeline/run/plan.ts";
import type { TickerRange } from "../../pipeline/stages/partitions.ts";
import { serviceConfig } from "../config.ts";
import type { JobData, JobName } from "./contracts.ts";
import { type JobProgress, jobId, WHOLE } from "./job-types.ts";
import { addJob, JOB_DEFAULTS } from "./queue.ts";

export type FlowData = JobData<"publish">;
export type BacktestData = JobData<"backtest">;

/**
 * The flow's whole-step jobs: those with a processor of their own, and `step` for every other whole step
 * run as a job (wholeStepPlacement); each partitioned step of the plan (pipeline/run/plan.ts) is a job kind too.
 */
export const FLOW_JOBS = {
  parent: "publish",
  ingest: "ingest",
  fundamentals: "fundamentals",
  step: "step",
} as const satisfies Record<string, JobName>;

export type FlowJobName = (typeof FLOW_JOBS)[keyof typeof FLOW_JOBS] | PartitionedName;

export function runFlowIds(sourceVersion: string) {
  const partition = <N extends PartitionedName>(name: N, input: PartitionInput<N>) =>
    jobId(name, sourceVersion, (PARTITIONED_STEPS[name] as PartitionedStep<z.ZodObject>).key(input));
  return {
    parent: jobId("publish", sourceVersion, WHOLE),
    ingest: jobId("ingest", sourceVersion, WHOLE),
    fundamentals: jobId("fundamentals", sourceVersion, WHOLE),
    /** A whole step run as a `step` job (wholeStepPlacement). */
    step: (name: WholeStep) => jobId("step", sourceVersion, name),
    partition,
    financials: (part: number) => partition("financials", { part }),
    analytics: (range: TickerRange) => partition("analytics", { range }),
    backtest: (portfolioId: string) => partition("backtest", { portfolioId }),
    /** A nightly append's backtest: one step, every portfolio continued (pipeline/stages/append.ts). */
    appendBacktest: jobId("backtest", sourceVersion, WHOLE),
  };
}

/** The staging folder's id (`snapshots/.staging-<id>`), the same on every machine for one flow. */
export const flowStagingId = (data: FlowData) =>
  `flow-${data.sourceVersion.replace(/[^\w-]/g, "_").slice(0, 40)}-${data.run.replace(/[^\w-]/g, "_").slice(0, 40)}`;

/** The whole steps whose jobs do more than call their stage (decide an append, fan out early, publish). */
const OWN_JOBS: readonly WholeStep[] = ["ingest", "fundamentals", "publish"];

const isWholeStep = (name: string): name is WholeStep => (WHOLE_STEPS as readonly string[]).includes(name);

/** A plan the flow cannot run: a partitioned step follows a whole step that only the publish job runs. */
export class FlowPlanError extends Error {
  readonly code = "FLOW_PLAN";
  constructor(message: string) {
    super(message);
    this.name = "FlowPlanError";
  }
}

/** Where the flow runs the whole steps of a full run's plan that have no job kind of their own. */
export interface WholePlacement {
  /** `step` jobs, each added under the parent by the job of the one whole step it waits for, once that is done. */
  jobs: { step: WholeStep; addedBy: WholeStep }[];
  /** Run by the publish job, in plan order, before it publishes (the merge among them). */
  inPublish: WholeStep[];
}

/**
 * BullMQ children cannot wait for their siblings: a whole step that waits for exactly one whole step
 * run as a job is a `step` job added by that job; any other (waiting for a partitioned step, for
 * several steps or for none) runs in the publish job, which waits for every child. The publish job
 * adds no children, so no partitioned step may follow a step it runs.
 */
export function wholeStepPlacement(plan: RunPlan = buildRunPlan("full")): WholePlacement {
  const asJobs = new Set<string>(OWN_JOBS.filter((s) => s !== "publish"));
  const placement: WholePlacement = { jobs: [], inPublish: [] };
  for (const { name, after } of plan.steps) {
    if (!isWholeStep(name) || OWN_JOBS.includes(name)) continue;
    const [only] = after;
    if (after.length === 1 && only && asJobs.has(only)) {
      placement.jobs.push({ step: name, addedBy: only as WholeStep });
      asJobs.add(name);
    } else placement.inPublish.push(name);
  }
  const stranded = plan.steps.filter(
    (s) =>
      Object.hasOwn(PARTITIONED_STEPS, s.name) &&
      placement.inPublish.includes(PARTITIONED_STEPS[s.name as PartitionedName].after),
  );
  if (stranded.length)
    throw new FlowPlanError(
      `${stranded.map((s) => s.name).join(", ")} follow a whole step the flow runs in its publish job, ` +
        `which adds no jobs: make that step wait for exactly one whole step run as a job`,
    );
  return placement;
}

/** The `step` jobs the job of the whole step `after` adds once it is done. */
export const stepJobsAfter = (after: WholeStep, plan?: RunPlan): WholeStep[] =>
  wholeStepPlacement(plan)
    .jobs.filter((j) => j.addedBy === after)
    .map((j) => j.step);

/** A queued run is a flow unless PIPELINE_FLOW=0 (then one `run` job, all stages on one worker). */
export const flowByDefault = () => serviceConfig().pipelineFlow;

export const newFlowRun = () => `${Date.now().toString(36)}-${randomBytes(4).toString("hex")}`;

/**
 * Children: a child that fails for good fails the run (the parent says which); a finished child is
 * removed at once (the parent keeps its count), so a later run of the same source reuses no stale child.
 */
export const CHILD_OPTS: JobsOptions = { ...JOB_DEFAULTS, failParentOnFailure: true, removeOnComplete: true };

/** Adds the flow (parent + ingest + fundamentals, at once); the parent's Job is returned. */
export async function addRunFlow(queue: Queue, source: Omit<FlowData, "run">): Promise<Job> {
  const data: FlowData = { ...source, run: newFlowRun() };
  const ids = runFlowIds(data.sourceVersion);
  const producer = new FlowProducer({ connection: queue.opts.connection, prefix: queue.opts.prefix });
  producer.on("error", () => undefined);
  try {
    const node = await producer.add({
      name: FLOW_JOBS.parent,
      queueName: queue.name,
      data,
      opts: { ...JOB_DEFAULTS, jobId: ids.parent },
      children: [
        { name: FLOW_JOBS.ingest, queueName: queue.name, data, opts: { ...CHILD_OPTS, jobId: ids.ingest } },
        { name: FLOW_JOBS.fundamentals, queueName: queue.name, data, opts: { ...CHILD_OPTS, jobId: ids.fundamentals } },
      ],
    });
    return node.job;
  } finally {
    await producer.close().catch(() => undefined);
  }
}

/** BullMQ priority of the stock-metric and financials jobs (1 is the highest; none comes before any). */
export const RANGE_PRIORITY = 1;

/** How long a backtest waits for the worker that holds its run's universe before another takes it, at most. */
export const AFFINITY_MS = 10_000;

/**
 * How long a run's backtests wait for the worker holding its universe: no longer than another worker
 * would take to load the universe itself (0.4 µs per company and price date; measured here: 13 s
 * at 5,000 × 25, 0.55 s on the sample), and at most AFFINITY_MS. While a backtest waits, the other
 * workers may take it again and again, putting it back each time: with a fixed 10 s, the sample's
 * last backtest once waited 4.1 s with both workers idle.
 */
export const affinityWindowMs = (companies: number, priceDates: number) =>
  Math.min(AFFINITY_MS, Math.ceil((companies * priceDates * 4) / 10_000));

/** Partitions of the run, per partitioned step of the plan. */
export type PartitionLists = { [N in PartitionedName]?: PartitionInput<N>[] };

/**
 * Partitions of a run added under its parent (by the steps that list them: ingest, fundamentals).
 * Equal ids are one job while it waits or runs; a finished child is removed at once, so a job that
 * adds children again (its retry, or its re-run after a lost lock) leaves out those whose output is whole (`done`).
 */
export interface FlowChildren {
  partitions: PartitionLists;
  /** Whole steps run as `step` jobs (wholeStepPlacement), added before the partitions. */
  steps?: WholeStep[];
  /** The worker holding the universe the backtests read, and for how long they wait for it (BacktestData). */
  affinity?: string;
  affinityMs?: number;
  done(name: PartitionedName, input: PartitionInput<PartitionedName>): boolean;
}

export async function addFlowChildren(
  queue: Queue,
  parent: { id: string; queueKey: string },
  data: FlowData,
  c: FlowChildren,
): Promise<number> {
  const ids = runFlowIds(data.sourceVersion);
  const opts: JobsOptions = { ...CHILD_OPTS, parent: { id: parent.id, queue: parent.queueKey } };
  // The ticker-range jobs are prioritized, which BullMQ takes only when no job without a priority
  // waits: a backtest (on the path to the publish, and cheapest on the worker that just finished
  // ingest) is taken before the next of the many range jobs.
  const ranged: JobsOptions = { ...opts, priority: RANGE_PRIORITY };
  const hint = c.affinity
    ? { affinity: c.affinity, ...(c.affinityMs !== undefined ? { affinityMs: c.affinityMs } : {}) }
    : {};
  const steps = (c.steps ?? []).map((step) => ({
    name: FLOW_JOBS.step,
    data: { ...data, step },
    opts: { ...opts, jobId: ids.step(step) },
  }));
  const partitions = PARTITIONED_NAMES.flatMap((name) =>
    (c.partitions[name] ?? [])
      .filter((input) => !c.done(name, input))
      .map((input) => ({
        name,
        data: { ...data, ...input, ...(name === "backtest" ? hint : {}) },
        opts: { ...(PARTITIONED_STEPS[name].ranged ? ranged : opts), jobId: ids.partition(name, input) },
      })),
  );
  const jobs = [...steps, ...partitions];
  if (jobs.length) await queue.addBulk(jobs);
  return jobs.length;
}

/** A nightly append's whole `backtest` step, added under its parent by its ingest job. */
export async function addAppendBacktest(
  queue: Queue,
  parent: { id: string; queueKey: string },
  data: FlowData,
): Promise<void> {
  const opts: JobsOptions = { ...CHILD_OPTS, parent: { id: parent.id, queue: parent.queueKey } };
  const flow = { sourceDir: data.sourceDir, sourceVersion: data.sourceVersion, run: data.run };
  await addJob(queue, "backtest", flow, { ...opts, jobId: runFlowIds(data.sourceVersion).appendBacktest });
}

/** What the enqueuing command shows while the parent waits: its finished children of all known so far. */
export async function flowProgress(job: Job): Promise<JobProgress | null> {
  const c = await job.getDependenciesCount({ processed: true, unprocessed: true });
  const done = c.processed ?? 0;
  return { stage: "flow: partition jobs", done, total: done + (c.unprocessed ?? 0) };
}
