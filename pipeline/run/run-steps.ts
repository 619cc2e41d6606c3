// The whole steps of a full run and of a backfill (pipeline/run/plan.ts binds them, KIND_STAGES): each a
// function of what its executor hands it (RunHost), called alike by the inline executor
// (jobs/local/runner.ts) and by the flow's processors (jobs/worker/processors/). What differs between
// executors is in the host: where the partitions run (a thread pool, or queue jobs), the DuckDB the
// step gets, and whether one process runs every step (then ingest computes the financials as the
// companies load and keeps the universe the backtests read). Progress, leases, heartbeats, the
// source's hash and the publish stay in the executors.
import type { StagedSource } from "../sources/index.ts";
import type { StageContext } from "../stages/context.ts";
import { type FlowPlan, flowIngestStep, flowMergeStep, type StepState } from "../stages/flow-steps.ts";
import { flowFundamentalsStep } from "../stages/fundamentals-step.ts";
import type { TickerRange } from "../stages/partitions.ts";
import type { UserPortfolio } from "../store/catalog/types.ts";

/** What a full run's or backfill's step gets from the executor running it. */
export interface RunHost extends StepState {
  ctx: StageContext;
  sourceDir: string;
  /** The catalog's user portfolios, read when ingest plans the backtests. */
  users(): UserPortfolio[];
  signal?: AbortSignal;
  /** A backfill's merge of the published history outside its window (ingest.ts). */
  merge?: (s: StagedSource) => Promise<void>;
  /**
   * One process runs every step (the inline executor): ingest computes the financials on the
   * partition pool as the companies load, and builds the universe the backtests read here.
   */
  oneProcess: boolean;
  /** The stock metric partitions, whose inputs are in `ctx.out` once `written`: the executor starts them. */
  partitionsReady(step: "analytics", inputs: { range: TickerRange }[], written: Promise<void>): Promise<void>;
  /** Every partition of a partitioned step, in this process (the flow runs them as jobs instead). */
  runPartitions(step: string): Promise<void>;
  /** What ingest planned (runIngest sets it; the merge returns it too). */
  plan: FlowPlan | null;
}

/** ingest: the source staged and validated, ratings and benchmarks, the plan of the partitions. */
export async function runIngest(h: RunHost): Promise<void> {
  h.plan = await flowIngestStep(h.ctx, h.sourceDir, h.users(), {
    analytics: (ranges, written) =>
      h.partitionsReady(
        "analytics",
        ranges.map((range) => ({ range })),
        written,
      ),
    merge: h.merge,
    financials: h.oneProcess,
    universe: h.oneProcess,
    signal: h.signal,
    universes: h.universes,
  });
}

/**
 * fundamentals, beside ingest: split by ticker range for the financials partitions (or the published
 * tables reused). In one process, ingest computed the financials already.
 */
export async function runFundamentals(h: Pick<RunHost, "ctx" | "sourceDir" | "oneProcess">): Promise<void> {
  if (h.oneProcess) return;
  await flowFundamentalsStep(h.ctx, h.sourceDir);
}

/** merge: the backtests' parts into the snapshot's tables (done already when they ran as one batch). */
export async function runMerge(h: { ctx: Pick<StageContext, "out">; plan: FlowPlan | null }): Promise<void> {
  h.plan = await flowMergeStep(h.ctx.out);
}

/** A partitioned step's stage in a plan executed in one process: its partitions, the executor's way. */
export const runPartitionsOf =
  (name: string) =>
  (h: Pick<RunHost, "runPartitions">): Promise<void> =>
    h.runPartitions(name);
