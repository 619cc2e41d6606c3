// A nightly append through the flow (pipeline/run/plan.ts KIND_STEPS.append). Whichever of the
// flow's ingest and fundamentals jobs comes first decides, as the inline executor does (the
// published snapshot and the source's hashes: append-plan.ts), and records it in the staging folder
// (`.flow/decision.json`); the other follows the record. On an append's, ingest stages the new days
// and leaves the append's record (pipeline/stages/append.ts), then adds one stock-metrics job per
// published returns part and the append's `backtest` job; the publish job publishes what they wrote.
// The fundamentals job leaves the fundamentals to ingest: should ingest find that the source does not
// continue the published snapshot (a NotAnAppendError), it goes on as a full run in the same flow and
// splits them itself.
import { mkdirSync } from "node:fs";
import type { Job } from "bullmq";
import { type AppendPlan, guessAppend, planAppend, writeSourceRecord } from "../../../pipeline/sources/append-plan.ts";
import { type AppendRecord, appendRun, NotAnAppendError } from "../../../pipeline/stages/append.ts";
import { appendIngest } from "../../../pipeline/stages/append-ingest.ts";
import { openStagingDuck } from "../../../pipeline/store/duck/duck.ts";
import { readManifest, readMeta, snapshotDir } from "../../../pipeline/store/snapshot/snapshots.ts";
import {
  createStagingRecord,
  emptyStaging,
  readStagingRecord,
  type StagingRecord,
  stagingLayout,
  writeStagingRecord,
} from "../../../pipeline/store/snapshot/staging-layout.ts";
import { serviceConfig } from "../../config.ts";
import { publishedRecord } from "../../local/published-record.ts";
import type { JobData } from "../../queue/contracts.ts";
import { addAppendBacktest } from "../../queue/flow.ts";
import { addChildren, type FlowContext, workerThreads } from "../flow-worker.ts";
import { flowStageContext } from "./flow-host.ts";

type AppendOnly = Extract<AppendPlan, { kind: "append" }>;

/**
 * The published snapshot this flow's source continues and the append's plan, or null (a full run).
 * The files' sizes err only towards an append, so a full run is known without hashing the source.
 */
export async function flowAppendPlan(dataDir: string, sourceDir: string) {
  const p = publishedRecord(dataDir);
  if (!p || guessAppend(sourceDir, p.record).kind === "full") return null;
  const plan = await planAppend(sourceDir, p.record);
  return plan.kind === "append" ? { ...p, plan } : null;
}

export type FlowAppend = NonNullable<Awaited<ReturnType<typeof flowAppendPlan>>>;

/**
 * This flow's decision, made here unless its other job (ingest or fundamentals) made it first.
 * `plan`: the append's as this job found it (null: none now), when this job read the published snapshot.
 */
export async function flowDecision(
  f: FlowContext,
  sourceDir: string,
): Promise<{ decision: StagingRecord<"decision">; plan?: FlowAppend | null }> {
  const layout = stagingLayout(f.out);
  const made = readStagingRecord("decision", layout.decision);
  if (made) return { decision: made };
  const plan = await flowAppendPlan(f.deps.dataDir, sourceDir);
  mkdirSync(layout.flowDir, { recursive: true });
  const decision = createStagingRecord("decision", layout.decision, { kind: plan ? "append" : "full" });
  return { decision, plan };
}

/**
 * The append's ingest step in this flow's staging folder, on a flow decided as an append's: "append"
 * when staged (its record and the run record written), "full" when the source does not continue the
 * published snapshot after all (the folder emptied, the decision marked: the full run's ingest and
 * fundamentals follow, in this job). `known`: the append's plan, when this job has just made it.
 */
export async function stageAppend(
  job: Job,
  data: JobData<"ingest">,
  f: FlowContext,
  known?: FlowAppend | null,
): Promise<"append" | "full"> {
  const { deps, out } = f;
  // An earlier attempt's files go: the append links the published ones in, which fails on a leftover.
  emptyStaging(out);
  const a = known !== undefined ? known : await flowAppendPlan(deps.dataDir, data.sourceDir);
  if (!a) return fallBack(job, f, "the published snapshot changed since the flow was decided");
  const t0 = performance.now();
  mkdirSync(out, { recursive: true });
  await deps.catalog.refresh();
  const current = readManifest(deps.dataDir);
  f.run.leaseSnapshot(a.base.snapshotId);
  const db = await openStagingDuck(out, {
    threads: String(workerThreads()),
    memory_limit: serviceConfig().stagingMemory,
  });
  try {
    if (current?.snapshotId !== a.base.snapshotId)
      throw new NotAnAppendError("another snapshot was published meanwhile");
    await appendIngest(appendOn(f, db, data.sourceDir, a));
  } catch (e) {
    if (!(e instanceof NotAnAppendError)) throw e;
    return fallBack(job, f, e.reason);
  } finally {
    f.run.releaseLease();
    db.dispose();
  }
  writeSourceRecord(out, a.plan.files.files);
  writeStagingRecord("run", stagingLayout(out).run, {
    ingestJob: job.timestamp,
    baseVersion: current?.version ?? 0,
    ingestMs: Math.round(performance.now() - t0),
    startedAt: job.timestamp,
    sourceId: a.plan.files.id,
  });
  return "append";
}

/**
 * Not an append after all: the folder emptied and the decision marked (a retry of this job goes on
 * as the full run at once; the fundamentals job, should it come only now, still leaves the split here).
 */
function fallBack(job: Job, f: FlowContext, reason: string): "full" {
  f.deps.log.info({ job: job.id, reason }, "the source does not continue the published snapshot: full run");
  emptyStaging(f.out);
  const layout = stagingLayout(f.out);
  mkdirSync(layout.flowDir, { recursive: true });
  writeStagingRecord("decision", layout.decision, { kind: "append", fellBack: true }, true);
  return "full";
}

/** The append's run over this job's staging DuckDB, on the published snapshot `a.base`. */
function appendOn(
  f: FlowContext,
  db: Awaited<ReturnType<typeof openStagingDuck>>,
  sourceDir: string,
  a: { base: { snapshotId: string }; record: AppendOnly["files"]["files"]; plan: AppendOnly },
) {
  const { deps } = f;
  const base = snapshotDir(deps.dataDir, a.base.snapshotId);
  const ctx = flowStageContext(f, db.conn, base, { connect: db.connect, progress: f.progress });
  const meta = readMeta(deps.dataDir, a.base.snapshotId);
  return appendRun(ctx, sourceDir, base, meta, a.record, a.plan, deps.catalog.allUserPortfolios());
}

/** The append's partitions (one stock-metrics job per published returns part) and its backtest job. */
export async function addAppendChildren(
  job: Job,
  data: JobData<"ingest">,
  f: FlowContext,
  record: AppendRecord,
): Promise<void> {
  await addChildren(job, data, f, { partitions: { analytics: record.returns.ranges.map((range) => ({ range })) } });
  await addAppendBacktest(f.queue(), { id: job.parent!.id!, queueKey: job.parent!.queueKey }, data);
}
