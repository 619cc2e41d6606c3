// `fundamentals`: splits the fundamentals by ticker range and adds one financials job per range to the parent.
import { mkdirSync } from "node:fs";
import type { Job } from "bullmq";
import { KIND_STAGES } from "../../../pipeline/run/plan.ts";
import { openDuck } from "../../../pipeline/store/duck/duck.ts";
import { DUCK_MEMORY } from "../../../pipeline/store/duck/duck-memory.ts";
import { readStagingRecord, stagingLayout } from "../../../pipeline/store/snapshot/staging-layout.ts";
import type { JobData } from "../../queue/contracts.ts";
import { stepJobsAfter } from "../../queue/flow.ts";
import {
  addChildren,
  type FlowContext,
  type FlowStep,
  partitionsListed,
  tickersPerPartition,
  workerThreads,
} from "../flow-worker.ts";
import { flowDecision } from "./append.ts";
import { flowHost, flowStageContext } from "./flow-host.ts";

export const fundamentalsStep: FlowStep<"fundamentals"> = async (job, data, f) => {
  if (!job.parent?.id)
    throw new Error(`fundamentals job ${job.id} has no parent: it is added only as part of a run's flow`);
  // A nightly append reuses the published financial tables; should its ingest find that the source
  // does not continue the published snapshot, that job splits the fundamentals itself. Decided once
  // for the flow: ingest, reading the published snapshot after a publish, follows this decision.
  if ((await flowDecision(f, data.sourceDir)).decision.kind === "append") {
    f.deps.log.info({ job: job.id }, "a nightly append: the fundamentals are left to its ingest");
    return { done: job.id! };
  }
  await splitFundamentals(job, data, f);
  return { done: job.id! };
};

/**
 * The fundamentals split by ticker range into the run's folder, and one financials job per range
 * added (with the step jobs after fundamentals). A split an earlier attempt left whole (this job's, or
 * ingest's after a fallback) is kept: only the jobs not done are added again.
 */
export async function splitFundamentals(
  job: Job,
  data: JobData<"ingest" | "fundamentals">,
  f: FlowContext,
): Promise<void> {
  const { deps, out } = f;
  const whole = Boolean(readStagingRecord("financials", stagingLayout(out).financials));
  if (!whole) await fundamentalsStage(data.sourceDir, f);
  f.signal?.throwIfAborted();
  const partitions = partitionsListed(out, "fundamentals");
  await addChildren(job, data, f, { partitions, steps: stepJobsAfter("fundamentals") });
  const parts = partitions.financials?.length ?? 0;
  deps.log.info(
    { job: job.id, partitions: parts },
    whole
      ? "financials split found whole: the jobs not done added"
      : parts
        ? "fundamentals split; financials jobs added"
        : "fundamentals unchanged: financial tables reused from the published snapshot",
  );
}

/** The plan's fundamentals stage on an in-memory DuckDB, the published snapshot leased meanwhile. */
async function fundamentalsStage(sourceDir: string, f: FlowContext): Promise<void> {
  const { out } = f;
  mkdirSync(out, { recursive: true });
  f.progress("fundamentals: splitting by ticker range", 0, 1);
  const base = f.run.leaseBase();
  const db = await openDuck(":memory:", {
    threads: String(workerThreads()),
    memory_limit: DUCK_MEMORY.fundamentalsSplit,
  });
  try {
    const ctx = flowStageContext(f, db.conn, f.run.snapshotDir(base), {
      tickersPerPartition: tickersPerPartition(),
    });
    await KIND_STAGES.full.fundamentals(flowHost(ctx, sourceDir, f));
  } finally {
    f.run.releaseLease();
    db.close();
  }
}
