// One entry point per request ("run the pipeline on this source", "rebalance this portfolio"):
// in-process without Redis, as an idempotent BullMQ job with it (any worker may take it; this
// process waits for the outcome, with a timeout, showing progress).

import { publishedHolding } from "../../pipeline/run/held-source.ts";
import { sourceStamp } from "../../pipeline/sources/fingerprint.ts";
import { ManifestMovedError } from "../../pipeline/store/snapshot/snapshots.ts";
import { runPipeline } from "../local/runner.ts";
import type { DispatchOptions, DispatchResult, RebalanceDispatch } from "./dispatch-options.ts";

export { JobFailedError, JobLostError, JobTimeoutError } from "./await-job.ts";
export { DEFAULT_TIMEOUT_MS, type DispatchOptions, type DispatchResult } from "./dispatch-options.ts";

// BullMQ and ioredis take a few hundred ms to load: only a command that queues pays for them.
const queued = () => import("./dispatch-queue.ts");

export async function dispatchRun(opts: DispatchOptions): Promise<DispatchResult> {
  // A queued run's jobs are named by the files' stamp (names, sizes, modification times), not their hash.
  const held = opts.force ? null : publishedHolding(opts.dataDir, opts.sourceDir, opts.window);
  if (held) return { snapshotId: held, totalMs: 0, skipped: true };
  if (!opts.redisUrl) return inProcess(opts);
  return (await queued()).queueRun(opts, sourceStamp(opts.sourceDir));
}

async function inProcess(opts: DispatchOptions): Promise<DispatchResult> {
  // A backfill merges into the snapshot current when it starts; if another publish moved the
  // manifest meanwhile, it is computed again on the new one (as a queued job would be retried).
  for (let attempt = 1; ; attempt++) {
    try {
      const { meta } = await runPipeline(opts);
      return { snapshotId: meta.id, totalMs: meta.timingsMs.total };
    } catch (e) {
      if (!(e instanceof ManifestMovedError) || attempt >= 3) throw e;
      opts.log.info({ attempt }, e.message);
    }
  }
}

/** Recomputes one portfolio: the one rebalance entry point and job-id recipe (jobs/queue/rebalance-requests.ts). */
export async function dispatchRebalance(opts: RebalanceDispatch): Promise<DispatchResult> {
  return (await import("./rebalance-requests.ts")).dispatchRebalance(opts);
}
