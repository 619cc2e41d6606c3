// A nightly append through the flow (pipeline/run/plan.ts KIND_STEPS.append): the ingest job decides
// as the inline executor does (the published snapshot and the source's hashes: append-plan.ts; a
// NotAnAppendError from the append's ingest), stages the new days and leaves the append's record
// (pipeline/stages/append.ts), then adds one stock-metrics job per published returns part and the
// append's `backtest` job; the publish job publishes what they wrote. A source that is not an append
// goes on as a full run in the same flow; its fundamentals job then leaves the split to ingest.
import { mkdirSync, rmSync } from "node:fs";
import type { Job } from "bullmq";
import { type AppendPlan, guessAppend, planAppend, writeSourceRecord } from "../../../pipeline/sources/append-plan.ts";
import { type AppendRecord, appendIngest, appendRun, NotAnAppendError } from "../../../pipeline/stages/append.ts";
import { takeLease } from "../../../pipeline/store/coordination/leases.ts";
import { openStagingDuck } from "../../../pipeline/store/duck/duck.ts";
import { readManifest, readMeta, snapshotDir } from "../../../pipeline/store/snapshot/snapshots.ts";
import { stagingLayout, writeStagingRecord } from "../../../pipeline/store/snapshot/staging-layout.ts";
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

/**
 * The append's ingest step in this flow's staging folder: "append" when staged (its record and the
 * run record written), "full" when the source was taken for an append but does not continue the
 * published snapshot (the folder emptied: the full run's ingest and fundamentals follow, in this job),
 * null when it is a full run from the start (the fundamentals job splits the fundamentals).
 */
export async function stageAppend(job: Job, data: JobData<"ingest">, f: FlowContext) {
  const { deps, out } = f;
  const a = await flowAppendPlan(deps.dataDir, data.sourceDir);
  if (!a) return null;
  const t0 = performance.now();
  mkdirSync(out, { recursive: true });
  await deps.catalog.refresh();
  const current = readManifest(deps.dataDir);
  const lease = takeLease(deps.dataDir, a.base.snapshotId);
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
    deps.log.info({ job: job.id, reason: e.reason }, "the source does not continue the published snapshot: full run");
    rmSync(out, { recursive: true, force: true });
    mkdirSync(out, { recursive: true });
    return "full" as const;
  } finally {
    lease.stop();
    db.close();
    rmSync(stagingLayout(out).tmp, { recursive: true, force: true });
  }
  writeSourceRecord(out, a.plan.files.files);
  writeStagingRecord("run", stagingLayout(out).run, {
    ingestJob: job.timestamp,
    baseVersion: current?.version ?? 0,
    ingestMs: Math.round(performance.now() - t0),
    startedAt: job.timestamp,
    sourceId: a.plan.files.id,
  });
  return "append" as const;
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
