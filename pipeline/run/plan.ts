// The run declared once. Each kind of run (a full run, a backfill of a date window, a nightly
// append, the rebalance of one portfolio) is a plan: a list of steps, each with the steps it waits
// for. A partitioned step says, in one table, what one partition takes (a zod schema: in the flow it
// crosses a process boundary as job data), where its partitions come from, whether one's output is
// whole, and the stage function that computes it. The executors iterate the plan:
//   - inline: jobs/local/runner.ts, this process, the partitions on worker threads (jobs/local/partition-pool.ts)
//     or one after another;
//   - the BullMQ flow: jobs/queue/flow.ts, one job per partition and per whole step (the whole steps that
//     must wait for partitions run in its publish job: wholeStepPlacement), on any number of workers;
//     its job contracts (jobs/queue/contracts.ts) and processors (jobs/worker/processors/) come from this table.
// Every step of every kind has one stage function here (KIND_STAGES for the whole steps, PARTITIONED_STEPS
// for the partitions), which every executor calls; what is the executor's own (progress, leases,
// heartbeats, where partitions run, the publish) it hands the stage (RunHost, pipeline/run/run-steps.ts).
// The steps talk only through the staging folder (pipeline/store/snapshot/staging-layout.ts owns its paths and
// records), so every executor publishes the same bytes. Adding a stage: docs/architecture.md.
import { z } from "zod";
import { SourceRejectedError } from "../sources/report.ts";
import { type AppendRun, appendRecordIn } from "../stages/append.ts";
import { appendMetrics, appendMetricsJob } from "../stages/append-analytics.ts";
import { appendIngest } from "../stages/append-ingest.ts";
import { appendPortfolios } from "../stages/append-portfolios.ts";
import type { StageContext } from "../stages/context.ts";
import { writeRatingEvidence } from "../stages/evidence.ts";
import { financialsPartition } from "../stages/financials-partition.ts";
import {
  analyticsDone,
  backtestDone,
  backtestsInline,
  flowBacktestStep,
  readPlan,
  requireAnalyticsInputs,
  type StepState,
} from "../stages/flow-steps.ts";
import { financialsDone, financialsSlice } from "../stages/fundamentals-step.ts";
import { type PartitionJob, runPartitionJob } from "../stages/partition-jobs.ts";
import { type RebalanceRun, rebalanceBacktest } from "../stages/rebalance.ts";
import { readStagingRecord, stagingLayout } from "../store/snapshot/staging-layout.ts";
import type { StepStages } from "./execute.ts";
import { type RunHost, runFundamentals, runIngest, runMerge, runPartitionsOf } from "./run-steps.ts";

export const RUN_KINDS = ["full", "backfill", "append", "rebalance"] as const;
export type RunKind = (typeof RUN_KINDS)[number];

/** The whole steps: one per run (their stage functions: KIND_STAGES). */
export const WHOLE_STEPS = ["ingest", "fundamentals", "evidence", "merge", "publish"] as const;
export type WholeStep = (typeof WHOLE_STEPS)[number];

const tickerRange = z.object({
  part: z.number().int().nonnegative(),
  from: z.string().nullable(),
  to: z.string().nullable(),
});

const tickersPart = (part: number) => `tickers-${String(part).padStart(4, "0")}`;

/** What a partition gets from the executor's host besides its input: the state the host keeps between steps. */
export type StepHost = StepState;

/** A step run once per partition of what an earlier step left. */
export interface PartitionedStep<I extends z.ZodObject> {
  /** The step whose output lists the partitions (it adds them to the flow; inline, they follow it). */
  after: WholeStep;
  /** One partition's input. */
  input: I;
  /** Every partition of the run in `out` (the staging folder), from the records its `after` step left. */
  partitions(out: string): z.infer<I>[];
  /** The partition's output is whole in `out` (written by rename): a re-run skips it. */
  done(out: string, input: z.infer<I>): boolean;
  /** The partition's part of its job id (jobs/queue/flow.ts). */
  key(input: z.infer<I>): string;
  /** Ticker-range work: in the flow, queued behind the steps on the path to the publish. */
  ranged: boolean;
  /** What progress calls it. */
  label: string;
  /** Computes one partition into `out`. */
  run(out: string, input: z.infer<I>, host: StepHost): Promise<void>;
  /** The same work as a worker-thread job (jobs/local/partition-pool.ts), when it can run on one. */
  thread?(out: string, input: z.infer<I>): PartitionJob;
  /** Every partition at once in one process, the output merged (the merge step then finds it done). */
  batch?(ctx: StageContext, host: StepHost): Promise<void>;
}

const partitioned = <I extends z.ZodObject>(s: PartitionedStep<I>) => s;

/** Every partitioned step, in the order the flow adds its jobs (a backtest is on the path to the publish). */
export const PARTITIONED_STEPS = {
  backtest: partitioned({
    after: "ingest",
    input: z.object({ portfolioId: z.string().min(1) }),
    partitions: (out) => readPlan(out).portfolioIds.map((portfolioId) => ({ portfolioId })),
    done: (out, { portfolioId }) => backtestDone(out, portfolioId),
    key: ({ portfolioId }) => `portfolio-${portfolioId}`,
    ranged: false,
    label: "backtest",
    run: (out, { portfolioId }, host) => flowBacktestStep(out, portfolioId, host),
    // one universe, no parts to merge: the batch writes the merged tables
    batch: (ctx, host) => backtestsInline(ctx, host.universes),
  }),
  analytics: partitioned({
    after: "ingest",
    input: z.object({ range: tickerRange }),
    // an append's: one per published returns part (pipeline/stages/append.ts)
    partitions: (out) => (appendRecordIn(out)?.returns.ranges ?? readPlan(out).ranges).map((range) => ({ range })),
    done: (out, { range }) => analyticsDone(out, range),
    key: ({ range }) => tickersPart(range.part),
    ranged: true,
    label: "analytics",
    run: async (out, { range }, host) => {
      const append = appendRecordIn(out);
      if (!append) requireAnalyticsInputs(out); // a clear message when the staging folder is gone
      const data = append ? appendMetricsJob(out, append, range) : { out, range };
      await runPartitionJob({ stage: "metrics", data }, host);
    },
    thread: (out, { range }) => ({ stage: "metrics", data: { out, range } }),
  }),
  financials: partitioned({
    after: "fundamentals",
    input: z.object({ part: z.number().int().nonnegative() }),
    partitions: (out) =>
      Array.from({ length: readStagingRecord("financials", stagingLayout(out).financials)?.parts ?? 0 }, (_, part) => ({
        part,
      })),
    done: (out, { part }) => financialsDone(out, part),
    key: ({ part }) => tickersPart(part),
    ranged: true,
    label: "financials",
    run: async (out, { part }) => {
      const r = await financialsPartition({ out, sliceDir: financialsSlice(out, part), part });
      if (r.rejectCount) throw new SourceRejectedError(r.rejects, r.rejectCount);
    },
  }),
};
export type PartitionedName = keyof typeof PARTITIONED_STEPS;
export type PartitionInput<N extends PartitionedName> = z.infer<(typeof PARTITIONED_STEPS)[N]["input"]>;
export const PARTITIONED_NAMES = Object.keys(PARTITIONED_STEPS) as PartitionedName[];

export type StepName = WholeStep | PartitionedName;

/** A step of a plan and the steps it waits for. */
export interface PlanStep {
  name: StepName;
  after: StepName[];
}

/** The steps of each kind of run, in an order that respects `after`. */
const KIND_STEPS: Record<RunKind, PlanStep[]> = {
  // fundamentals beside ingest; the partitions after what lists them; the merge once the backtests are in
  full: [
    { name: "ingest", after: [] },
    { name: "fundamentals", after: [] },
    { name: "financials", after: ["fundamentals"] },
    { name: "analytics", after: ["ingest"] },
    { name: "backtest", after: ["ingest"] },
    { name: "merge", after: ["backtest"] },
    // what the ratings predicted (pipeline/stages/evidence.ts), over the prices and ratings ingest wrote
    { name: "evidence", after: ["ingest"] },
    { name: "publish", after: ["merge", "analytics", "financials", "evidence"] },
  ],
  // the same steps; ingest merges the published history outside the window first
  backfill: [],
  // pipeline/stages/append.ts: the new days only (its ingest also rewrites the rating evidence, which
  // every new day may change); the metric partitions over the published parts
  append: [
    { name: "ingest", after: [] },
    { name: "analytics", after: ["ingest"] },
    { name: "backtest", after: ["ingest"] },
    { name: "publish", after: ["analytics", "backtest"] },
  ],
  // pipeline/stages/rebalance.ts: one backtest on the published snapshot, every other table linked
  rebalance: [
    { name: "backtest", after: [] },
    { name: "publish", after: ["backtest"] },
  ],
};
KIND_STEPS.backfill = KIND_STEPS.full;

/**
 * The stage function of each step of a full run and a backfill but the publish, over what the executor
 * hands it (RunHost): the flow's processors call the whole steps' one by one; a partitioned step's
 * runs its partitions the executor's way (the flow: one job each, PARTITIONED_STEPS[n].run).
 */
const WHOLE_RUN_STAGES = {
  ingest: runIngest,
  fundamentals: runFundamentals,
  merge: runMerge,
  evidence: (h: Pick<RunHost, "ctx">) => writeRatingEvidence(h.ctx),
  // every partitioned step: its partitions, the executor's way
  ...(Object.fromEntries(PARTITIONED_NAMES.map((n) => [n, runPartitionsOf(n)])) as Record<
    PartitionedName,
    ReturnType<typeof runPartitionsOf>
  >),
} satisfies StepStages<RunHost, StepName>;

/**
 * The stage function of each step of each kind but the publish (the executor's): a full run's and a
 * backfill's over what the executor hands it; the append's and the rebalance's over the state of the
 * run on the published snapshot (the append's steps share only what its ingest leaves in the staging
 * folder, so the flow runs them as jobs too; the rebalance runs in one process).
 */
export const KIND_STAGES = {
  full: WHOLE_RUN_STAGES,
  backfill: WHOLE_RUN_STAGES,
  append: {
    ingest: appendIngest,
    analytics: appendMetrics,
    backtest: appendPortfolios,
  } satisfies StepStages<AppendRun>,
  rebalance: { backtest: rebalanceBacktest } satisfies StepStages<RebalanceRun>,
};

export interface RunPlan {
  kind: RunKind;
  steps: PlanStep[];
}

/** The plan of a kind of run. */
export function buildRunPlan(kind: RunKind): RunPlan {
  return { kind, steps: KIND_STEPS[kind] };
}

/** The partitioned steps of `plan` that follow the whole step `after`. */
export function partitionsAfter(plan: RunPlan, after: WholeStep): PartitionedName[] {
  const names = new Set(plan.steps.map((s) => s.name));
  return PARTITIONED_NAMES.filter((n) => names.has(n) && PARTITIONED_STEPS[n].after === after);
}

/**
 * Partitions of the run in `out` whose output is not whole, per step (the publish's check before it
 * publishes); `except`: steps another check covers (the merge checks the backtests' parts it removes).
 */
export function missingPartitions(
  plan: RunPlan,
  out: string,
  except: PartitionedName[] = [],
): { step: PartitionedName; missing: number; of: number }[] {
  return PARTITIONED_NAMES.filter((n) => !except.includes(n) && plan.steps.some((s) => s.name === n))
    .map((n) => {
      const step = PARTITIONED_STEPS[n] as PartitionedStep<z.ZodObject>;
      const all = step.partitions(out);
      return { step: n, missing: all.filter((i) => !step.done(out, i)).length, of: all.length };
    })
    .filter((m) => m.missing > 0);
}
