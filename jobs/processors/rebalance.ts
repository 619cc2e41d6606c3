// `rebalance`: one portfolio recomputed on the published snapshot (jobs/rebalance-requests.ts).
import { DelayedError } from "bullmq";
import { SourceRejectedError } from "../../pipeline/sources/report.ts";
import { PortfolioNotFoundError } from "../../pipeline/stages/rebalance.ts";
import { noteRebalanceFailure, runRebalance } from "../rebalance-requests.ts";
import type { JobProcessor } from "./types.ts";

export const processRebalance: JobProcessor<"rebalance"> = async (job, data, { deps, progress }) => {
  try {
    await deps.catalog.refresh();
    progress("rebalance", 0, 1);
    const meta = await runRebalance(deps, data.portfolioId, job.id);
    return { snapshotId: meta.id, totalMs: meta.timingsMs.total };
  } catch (e) {
    // The last attempt: the failure is recorded against the change that asked for it. An unknown
    // portfolio fails at once and records nothing (the worker makes it unrecoverable).
    const notRecorded =
      e instanceof DelayedError || e instanceof SourceRejectedError || e instanceof PortfolioNotFoundError;
    if (!notRecorded && job.attemptsMade + 1 >= (job.opts.attempts ?? 1))
      await noteRebalanceFailure(deps, data.portfolioId, data.requestedAt ?? null, e);
    throw e;
  }
};
