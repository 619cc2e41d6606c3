// What travels through Redis: plain JSON job data and deterministic job ids. Nothing here is
// machine-local: paths are those of the shared store/source volume, versions are content hashes,
// so any worker on any machine that mounts the same paths can take any job.
import { createHash } from "node:crypto";
import type { DateWindow } from "../../pipeline/stages/backfill.ts";
import { JOB_NAMES, type JobData, type JobName } from "./contracts.ts";

/** Job names (the stage each runs): those of the contracts (jobs/queue/contracts.ts). */
export const STAGES: readonly JobName[] = JOB_NAMES;
export type Stage = JobName;

/** The whole partition; a partitioned flow names its ticker range, portfolio or benchmark instead. */
export const WHOLE = "all";

export type RunJobData = JobData<"run">;
export type BackfillJobData = JobData<"backfill">;
export type RebalanceJobData = JobData<"rebalance">;
export type JobDataOf<S extends Stage> = JobData<S>;

export interface JobResult {
  snapshotId: string;
  totalMs: number;
}

/** Progress as a worker reports it (job.updateProgress) and the enqueuing command shows it. */
export interface JobProgress {
  stage: string;
  done: number;
  total: number;
}

/**
 * `stage.sourceVersion.partition`, e.g. `run.s3f9a….all`, `backfill.s3f9a…_2024-01-01_2024-01-31.all`,
 * `rebalance.8c1e….portfolio-42`. BullMQ refuses ':' in custom ids; anything outside [\w@-] becomes '_'.
 */
export function jobId(stage: Stage, sourceVersion: string, partition: string = WHOLE): string {
  const clean = (s: string) => s.replace(/[^\w@-]/g, "_");
  return `${stage}.${clean(sourceVersion)}.${clean(partition)}`;
}

export const backfillVersion = (sourceVersion: string, w: DateWindow) => `${sourceVersion}_${w.from}_${w.to}`;

/** A stable short hash of any JSON value (object keys sorted). */
export function versionOf(value: unknown): string {
  const sorted = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sorted)
      : v && typeof v === "object"
        ? Object.fromEntries(
            Object.keys(v)
              .sort()
              .map((k) => [k, sorted((v as Record<string, unknown>)[k])]),
          )
        : v;
  return createHash("sha256")
    .update(JSON.stringify(sorted(value)))
    .digest("hex")
    .slice(0, 16);
}
