// `backtest` jobs (processors/partition.ts runs them): one portfolio of the run, on the universe ingest
// staged. A backtest whose universe
// another live worker holds is left to it for a while (its affinityMs from its creation): put back as
// delayed, and this worker takes the next job. After that, or when the job names no worker, any worker runs it.
import type { Job } from "bullmq";
import { KIND_STAGES } from "../../../pipeline/run/plan.ts";
import type { StageContext } from "../../../pipeline/stages/context.ts";
import type { JobData } from "../../queue/contracts.ts";
import { type FlowContext, type FlowStep, leaveBacktest, WORKER } from "../flow-worker.ts";
import { partitionStep } from "./partition.ts";

const portfolioStep = partitionStep("backtest");

/**
 * One portfolio of a full run's backtests, or (no portfolio named) a nightly append's whole `backtest`
 * step: every portfolio continued from what the append's ingest left in the staging folder.
 */
export const backtestStep: FlowStep<"backtest"> = async (job, data, f) => {
  if (data.portfolioId !== undefined) return portfolioStep(job, data, f);
  f.progress("append: backtests", 0, 1);
  await KIND_STAGES.append.backtest({ ctx: { out: f.out } as StageContext, timings: {} });
  return { done: job.id! };
};

/** Puts the job back (delayed 200 ms) when another worker holds its universe (see leaveBacktest). */
export async function leaveToAffinity(job: Job, data: JobData<"backtest">, f: FlowContext): Promise<boolean> {
  if (
    !f.token ||
    !leaveBacktest(data, { worker: WORKER, holdsUniverse: f.universes.holds(f.out), ageMs: Date.now() - job.timestamp })
  )
    return false;
  await job.moveToDelayed(Date.now() + 200, f.token);
  f.deps.log.info(
    { job: job.id, ageMs: Date.now() - job.timestamp },
    "backtest left to the worker holding its universe",
  );
  return true;
}
