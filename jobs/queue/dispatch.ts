// One entry point per request ("run the pipeline on this source", "rebalance this portfolio"):
// in-process without Redis, as an idempotent BullMQ job with it (any worker may take it; this
// process waits for the outcome, with a timeout, showing progress).

import { mayBeBuiltFrom } from "../../pipeline/sources/append-plan.ts";
import { sourceFingerprint, sourceStamp } from "../../pipeline/sources/fingerprint.ts";
import type { DateWindow } from "../../pipeline/stages/backfill.ts";
import {
  type Manifest,
  ManifestMovedError,
  readManifest,
  snapshotDir,
} from "../../pipeline/store/snapshot/snapshots.ts";
import { runPipeline } from "../local/runner.ts";
import type { DispatchOptions, DispatchResult, RebalanceDispatch } from "./dispatch-options.ts";

export { JobFailedError, JobLostError, JobTimeoutError } from "../cli/await-job.ts";
export { DEFAULT_TIMEOUT_MS, type DispatchOptions, type DispatchResult } from "./dispatch-options.ts";

// BullMQ and ioredis take a few hundred ms to load: only a command that queues pays for them.
const queued = () => import("./dispatch-queue.ts");

export async function dispatchRun(opts: DispatchOptions): Promise<DispatchResult> {
  const current = readManifest(opts.dataDir);
  // Only a published snapshot that may hold this very source (same names and sizes; a backfill's
  // window) needs the source's hash before anything starts, to see that nothing is to be done.
  // Otherwise the run hashes the source itself while DuckDB works (what the snapshot records), and
  // a queued run's jobs are named by the files' stamp (names, sizes, modification times): hashing
  // 2 GB first would hold every run back by as long (2 s at 5,000 × 25: a fifth of a nightly append).
  const mayHold = (m: Manifest) =>
    opts.window !== undefined || mayBeBuiltFrom(snapshotDir(opts.dataDir, m.snapshotId), m.sourceId, opts.sourceDir);
  if (
    !opts.force &&
    current &&
    mayHold(current) &&
    alreadyHolds(current.sourceId, sourceFingerprint(opts.sourceDir), opts.window)
  )
    return { snapshotId: current.snapshotId, totalMs: 0, skipped: true };
  if (!opts.redisUrl) return inProcess(opts);
  return (await queued()).queueRun(opts, sourceStamp(opts.sourceDir));
}

/** A run publishes the source's fingerprint as sourceId; a backfill appends `+fp@from..to`. */
function alreadyHolds(sourceId: string, fp: string, w?: DateWindow): boolean {
  return w ? sourceId.endsWith(`+${fp}@${w.from}..${w.to}`) : sourceId === fp;
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
