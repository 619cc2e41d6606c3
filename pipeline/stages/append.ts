// The nightly append (pipeline/run/plan.ts KIND_STAGES.append): a source that only added trading
// days to the one the published snapshot was built from (append-plan.ts) is not read again. Its
// steps, a file each: `ingest` (append-ingest.ts: the new rows validated as a small source of their
// own, the published prices and ratings hard-linked and the new days added as files of their own,
// returns for the new days only, the benchmarks continued from their recorded states); then side by
// side `backtest` (append-portfolios.ts: every portfolio continued from its recorded state) and
// `analytics` (append-analytics.ts: every stock's full-period metric tables recomputed from the
// published returns plus the new ones, one partition job per published part). This file: the state
// the steps share, the record ingest leaves for the others, and the run's result.
import { join } from "node:path";
import type { AppendPlan } from "../sources/append-plan.ts";
import type { SourceFile } from "../sources/fingerprint.ts";
import type { UserPortfolio } from "../store/catalog/types.ts";
import type { Binds } from "../store/duck/duck.ts";
import type { SnapshotMeta } from "../store/snapshot/snapshots.ts";
import { readStagingRecord, type StagingRecord, stagingLayout } from "../store/snapshot/staging-layout.ts";
import type { StageContext } from "./context.ts";

export { NotAnAppendError } from "./append-backtests.ts";

export interface AppendResult {
  lastPriceDate: string;
  counts: Record<string, number>;
  /** Milliseconds per step: read (the new rows), companies, tables, returns, benchmarks, portfolios, metrics. */
  timings: Record<string, number>;
}

/** The state the append's steps share (pipeline/run/plan.ts KIND_STAGES.append). */
export interface AppendRun {
  ctx: StageContext;
  sourceDir: string;
  /** The published snapshot it continues, and its meta. */
  base: string;
  baseMeta: Pick<SnapshotMeta, "lastPriceDate" | "counts">;
  /** The published source's files, what grew since, and the catalog's user portfolios. */
  published: SourceFile[];
  plan: Extract<AppendPlan, { kind: "append" }>;
  users: UserPortfolio[];
  grown: Set<string>;
  /** Milliseconds per step: read (the new rows), companies, tables, returns, benchmarks, portfolios, metrics. */
  timings: Record<string, number>;
  partitions: number;
}

/** What the ingest step leaves in the staging folder for the other steps and the publish. */
export type AppendRecord = StagingRecord<"append">;

/** The append of `plan` onto the snapshot in `base`, before its steps run. */
export function appendRun(
  ctx: StageContext,
  sourceDir: string,
  base: string,
  baseMeta: AppendRun["baseMeta"],
  published: SourceFile[],
  plan: AppendRun["plan"],
  users: UserPortfolio[],
): AppendRun {
  const grown = new Set<string>(plan.grown);
  return {
    ctx,
    sourceDir,
    base,
    baseMeta,
    published,
    plan,
    users,
    grown,
    timings: {},
    partitions: 0,
  };
}

/** Progress of the append's steps (4 in all). */
export const appendProgress = (r: AppendRun, name: string, done: number) =>
  r.ctx.progress?.(`append: ${name}`, done, 4);
/** A published table of the snapshot in `base`, as a relation with its file bound. */
export const pubRel = (base: string) => (t: string, b: Binds) => `read_parquet(${b.v(join(base, `${t}.parquet`))})`;
/** The record the ingest step left in `out` (the later steps share nothing else with it). */
export function readAppendRecord(out: string): AppendRecord {
  const record = readStagingRecord("append", stagingLayout(out).append);
  if (!record) throw new Error(`the append's ingest step has not run in ${out}`);
  return record;
}

/** Milliseconds since the previous lap, into `timings`. */
export function lapper(timings: Record<string, number>) {
  let t = performance.now();
  return (name: string) => {
    const now = performance.now();
    timings[name] = Math.round(now - t);
    t = now;
  };
}

/** The append's record in `out` when its ingest step left one (a full run's folder has none). */
export const appendRecordIn = (out: string): AppendRecord | null =>
  readStagingRecord("append", stagingLayout(out).append);

/** What the append's steps built: the snapshot's last price date and counts, and the steps' timings. */
export function appendResult(r: AppendRun): AppendResult {
  const { lastPriceDate, counts, newDays } = readAppendRecord(r.ctx.out);
  appendProgress(r, "done", 4);
  r.ctx.log.info({ newDays, partitions: r.partitions }, "analytics computed");
  return { lastPriceDate, counts, timings: r.timings };
}
