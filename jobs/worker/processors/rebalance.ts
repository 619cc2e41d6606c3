// `rebalance`: one portfolio recomputed on the published snapshot (jobs/queue/rebalance-requests.ts).
import { DelayedError } from "bullmq";
import { SourceRejectedError } from "../../../pipeline/sources/report.ts";
import { PortfolioNotFoundError } from "../../../pipeline/stages/rebalance.ts";
import { readManifest } from "../../../pipeline/store/snapshot/snapshots.ts";
import { runRebalance } from "../../local/rebalance-run.ts";
import { forkRebalance, noteRebalanceFailure, type RebalanceDeps } from "../../queue/rebalance-requests.ts";
import { afterPublish } from "../../webhooks/event-sink.ts";
import type { JobProcessor } from "./types.ts";

export const processRebalance: JobProcessor<"rebalance"> = async (job, data, { deps, progress, signal }) => {
  try {
    await deps.catalog.refresh();
    progress("rebalance", 0, 1);
    // The worker inside `npm start` shares its process with the HTTP server: a backtest there (about
    // 1 GB and 10–40 s of CPU at 5,000 × 25) would hold every request, so it runs in a child process.
    const r = deps.rebalanceInChild
      ? await inChild(deps, data.portfolioId, job.id, signal)
      : await runRebalance(deps, data.portfolioId, job.id).then((m) => ({
          snapshotId: m.id,
          totalMs: m.timingsMs.total,
        }));
    await afterPublish(deps.events, readManifest(deps.dataDir)?.version, deps.log);
    return r;
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

/** The rebalance in a process of its own (jobs/local/rebalance-child.ts); a cancelled job stops it. */
async function inChild(deps: RebalanceDeps, portfolioId: string, job?: string, signal?: AbortSignal) {
  const { child, done } = forkRebalance(deps, portfolioId, job);
  const stop = () => child.kill("SIGTERM");
  signal?.addEventListener("abort", stop, { once: true });
  try {
    return await done;
  } finally {
    signal?.removeEventListener("abort", stop);
  }
}
