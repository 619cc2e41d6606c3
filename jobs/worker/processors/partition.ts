// A job of a partitioned step of the plan (pipeline/run/plan.ts: backtest, analytics, financials):
// the step's stage on one partition, in the run's staging folder. One processor for every such step:
// adding a partitioned step to the plan adds its job kind (jobs/queue/contracts.ts) and its processor here.
import type { z } from "zod";
import {
  PARTITIONED_NAMES,
  PARTITIONED_STEPS,
  type PartitionedName,
  type PartitionedStep,
} from "../../../pipeline/run/plan.ts";
import type { JobResultOf } from "../../queue/contracts.ts";
import { type FlowStep, inFlow } from "../flow-worker.ts";
import type { JobProcessor } from "./types.ts";

export function partitionStep<N extends PartitionedName>(name: N): FlowStep<N> {
  const step = PARTITIONED_STEPS[name] as PartitionedStep<z.ZodObject>;
  return async (job, data, { out, progress, universes, levels }) => {
    progress(step.label, 0, 1);
    await step.run(out, step.input.parse(data), { universes, levels });
    return { done: job.id! } as JobResultOf<N>;
  };
}

/** The processor of every partitioned step's jobs. */
export function partitionProcessors(): { [N in PartitionedName]: JobProcessor<N> } {
  return Object.fromEntries(PARTITIONED_NAMES.map((n) => [n, inFlow(n, partitionStep(n))])) as unknown as {
    [N in PartitionedName]: JobProcessor<N>;
  };
}
