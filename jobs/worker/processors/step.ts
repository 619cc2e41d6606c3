// `step`: a whole step of a full run's plan with no job kind of its own (jobs/queue/flow.ts,
// wholeStepPlacement): the plan's stage function (KIND_STAGES.full) on a staging DuckDB of its own,
// then the partitions and the `step` jobs that follow it. The publish job runs the whole steps placed in
// it (the merge) through runWholeSteps too. A retried step runs its stage again over what the first
// attempt left: a whole step writes each output by rename (present means whole), so a second run
// replaces, never adds to, the first's; the children it adds again are deduplicated by their job ids,
// or skipped when their output is whole (a finished `step` child runs again: the same rewrite).
import { UnrecoverableError } from "bullmq";
import type { StepStages } from "../../../pipeline/run/execute.ts";
import { KIND_STAGES, type StepName, type WholeStep } from "../../../pipeline/run/plan.ts";
import type { RunHost } from "../../../pipeline/run/run-steps.ts";
import { openStagingDuck } from "../../../pipeline/store/duck/duck.ts";
import { serviceConfig } from "../../config.ts";
import { stepJobsAfter, wholeStepPlacement } from "../../queue/flow.ts";
import {
  addChildren,
  type FlowContext,
  type FlowStep,
  partitionsListed,
  tickersPerPartition,
  workerThreads,
} from "../flow-worker.ts";
import { flowHost, flowStageContext } from "./flow-host.ts";

export const wholeStepJob: FlowStep<"step"> = async (job, data, f) => {
  if (!job.parent?.id) throw new Error(`step job ${job.id} has no parent: it is added only as part of a run's flow`);
  if (!wholeStepPlacement().jobs.some((j) => j.step === data.step))
    // the same data fails the same way on a retry (a worker on another version of the plan)
    throw new UnrecoverableError(`${data.step} is not a whole step the flow runs as a step job (jobs/queue/flow.ts)`);
  await runWholeSteps([data.step], data.sourceDir, f);
  f.signal?.throwIfAborted();
  await addChildren(job, data, f, {
    partitions: partitionsListed(f.out, data.step),
    steps: stepJobsAfter(data.step),
  });
  f.deps.log.info({ job: job.id }, `${data.step} done; the steps after it added`);
  return { done: job.id! };
};

/**
 * The stage functions of `steps`, one after another, on one host: a staging DuckDB of this job's own
 * (removed after, leaving the folder to any other job of the run using it) and a lease on the published
 * snapshot they may read. `timings`: each step's milliseconds. The host is returned (the merge sets its plan).
 */
export async function runWholeSteps(
  steps: WholeStep[],
  sourceDir: string,
  f: FlowContext,
  timings: Record<string, number> = {},
): Promise<RunHost | null> {
  if (!steps.length) return null;
  const base = f.run.leaseBase();
  const db = await openStagingDuck(f.out, {
    threads: String(workerThreads()),
    memory_limit: serviceConfig().stagingMemory,
  });
  try {
    const ctx = flowStageContext(f, db.conn, f.run.snapshotDir(base), {
      connect: db.connect,
      progress: f.progress,
      tickersPerPartition: tickersPerPartition(),
    });
    const host = flowHost(ctx, sourceDir, f, { signal: f.signal });
    const stages: StepStages<RunHost, StepName> = KIND_STAGES.full;
    for (const step of steps) {
      const stage = stages[step];
      if (!stage) throw new Error(`the full plan's step ${step} has no stage function`);
      f.signal?.throwIfAborted();
      const t = performance.now();
      await stage(host);
      timings[step] = Math.round(performance.now() - t);
    }
    return host;
  } finally {
    f.run.releaseLease();
    db.dispose();
  }
}
