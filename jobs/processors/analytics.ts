// `analytics`: the stock metrics of one ticker range, from what ingest staged.
import { requireAnalyticsInputs } from "../../pipeline/stages/flow-steps.ts";
import { runPartitionJob } from "../../pipeline/stages/partition-jobs.ts";
import type { FlowStep } from "../flow-worker.ts";

export const analyticsStep: FlowStep<"analytics"> = async (job, { range }, { out, progress }) => {
  requireAnalyticsInputs(out); // a clear message when the staging folder is gone
  progress("analytics", 0, 1);
  await runPartitionJob({ stage: "metrics", data: { out, range } });
  return { done: job.id! };
};
