// `financials`: one ticker range of the fundamentals split by the fundamentals job, into the run's staging folder.
import { SourceRejectedError } from "../../pipeline/sources/report.ts";
import { financialsPartition } from "../../pipeline/stages/financials-partition.ts";
import { financialsSlice } from "../../pipeline/stages/flow-steps.ts";
import type { FlowStep } from "../flow-worker.ts";

export const financialsStep: FlowStep<"financials"> = async (job, { part }, { out, progress }) => {
  progress("financials", 0, 1);
  const r = await financialsPartition({ out, sliceDir: financialsSlice(out, part), part });
  if (r.rejectCount) throw new SourceRejectedError(r.rejects, r.rejectCount);
  return { done: job.id! };
};
