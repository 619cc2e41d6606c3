// `publish`, the parent of a run's flow: once every child is done, merges what they staged and publishes
// the snapshot; then re-applies the rebalances that the publish's base missed.
import { existsSync } from "node:fs";
import { buildRunPlan, missingPartitions } from "../../../pipeline/run/plan.ts";
import { appendRecordIn, readAppendRecord } from "../../../pipeline/stages/append.ts";
import { planCounts, readPlan } from "../../../pipeline/stages/flow-steps.ts";
import { financialsParts } from "../../../pipeline/stages/fundamentals-step.ts";
import { readManifest, snapshotMeta } from "../../../pipeline/store/snapshot/snapshots.ts";
import {
  readStagingRecord,
  type StagingRecord,
  stagingLayout,
  writeStagingRecord,
} from "../../../pipeline/store/snapshot/staging-layout.ts";
import { wholeStepPlacement } from "../../queue/flow.ts";
import type { FlowContext, FlowStep } from "../flow-worker.ts";
import { runWholeSteps } from "./step.ts";

export const publishStep: FlowStep<"publish"> = async (job, data, f) => {
  const { deps, out } = f;
  // A retry: an earlier attempt's publish failed (files put back), or it died before it could.
  f.run.restoreAside();
  const layout = stagingLayout(out);
  if (!existsSync(out)) {
    // Published by an earlier attempt that failed after it (the snapshot is live): finish, don't fail.
    const sent = readStagingRecord("publishing", layout.publishingAside);
    const entry = sent
      ? readManifest(deps.dataDir)?.log?.find((e) => e.snapshotId === sent.snapshotId && e.job === job.id)
      : undefined;
    if (!sent || !entry)
      throw new Error(
        `the run's staging folder ${out} is gone and no publish of it is recorded; run the command again`,
      );
    await f.run.afterPublish({ ...readManifest(deps.dataDir)!, version: entry.version }, sent.baseVersion);
    f.run.finish();
    return { snapshotId: sent.snapshotId, totalMs: sent.totalMs };
  }
  const record = readStagingRecord("run", layout.run);
  if (!record)
    throw new Error(`the run's staging folder ${out} has no run record: ingest never finished; run the command again`);
  const append = appendRecordIn(out);
  const parts = append ? await appendParts(out, record) : await mergedRun(data.sourceDir, f, record);
  // Cancelled: the merge is the last stage before the publish, which is not started.
  f.signal?.throwIfAborted();
  const total = Date.now() - record.startedAt;
  const meta = snapshotMeta({
    sourceId: record.sourceId ?? data.sourceVersion,
    sourceDir: data.sourceDir,
    ...parts,
    timingsMs: { ...parts.timingsMs, total },
  });
  // What is written while publishing: the snapshot's id, for a retry to find its publish in the manifest's log.
  writeStagingRecord("publishing", layout.publishing, {
    snapshotId: meta.id,
    baseVersion: record.baseVersion,
    totalMs: total,
  });
  // Published under the flow's job id (the parent's, this job's), its records set aside, then the
  // after-publish steps (the rebalances the run's base missed re-applied, the events step): a retry
  // after a crash among them runs them again (above), under the same job ids.
  await f.run.publish(meta, { kind: "run", baseVersion: record.baseVersion, logged: {} });
  // Every job of the run is done: the scratch files, the records set aside (what a retry finds this
  // publish by), the heartbeat.
  f.run.finish();
  return { snapshotId: meta.id, totalMs: total };
};

/** A nightly append's steps all done: what its ingest recorded (pipeline/stages/append.ts). */
async function appendParts(out: string, record: StagingRecord<"run">) {
  const missing = missingPartitions(buildRunPlan("append"), out, ["backtest"]);
  if (missing.length) throw new Error(partitionsMissing(missing, out));
  const { lastPriceDate, counts } = readAppendRecord(out);
  return { lastPriceDate, counts, timingsMs: { append: Date.now() - record.startedAt, ingest: record.ingestMs } };
}

/**
 * A full run's partitions all whole; then the whole steps the flow runs here (wholeStepPlacement: the
 * merge of the backtests' parts into the snapshot's tables, and any other that waits for a partitioned step).
 */
async function mergedRun(sourceDir: string, f: FlowContext, record: StagingRecord<"run">) {
  const { out } = f;
  const fin = financialsParts(out);
  if (fin.planned < 0 || fin.written !== fin.planned)
    throw new Error(`financials: ${fin.written} of ${fin.planned < 0 ? "?" : fin.planned} partitions in ${out}`);
  // Every partition of the plan's steps whole (the merge checks the backtests, whose parts it removes).
  const missing = missingPartitions(buildRunPlan("full"), out, ["backtest"]);
  if (missing.length) throw new Error(partitionsMissing(missing, out));
  const timings: Record<string, number> = {};
  const host = await runWholeSteps(wholeStepPlacement().inPublish, sourceDir, f, timings);
  const plan = host?.plan ?? readPlan(out);
  return {
    lastPriceDate: plan.lastPriceDate,
    counts: planCounts(plan),
    timingsMs: { ingest: record.ingestMs, ...timings },
  };
}

const partitionsMissing = (missing: ReturnType<typeof missingPartitions>, out: string) =>
  missing.map((m) => `${m.step}: ${m.of - m.missing} of ${m.of} partitions in ${out}`).join("; ");
