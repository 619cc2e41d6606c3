// `ingest`: stages the source into the run's folder, adds a stock-metrics job per ticker range as soon
// as their inputs are staged, then the backtests (for this worker when it holds the universe they read).
import { mkdirSync } from "node:fs";
import { KIND_STAGES, type PartitionedName } from "../../../pipeline/run/plan.ts";
import { writeSourceRecord } from "../../../pipeline/sources/append-plan.ts";
import { sourceFilesAsync, sourceStamp } from "../../../pipeline/sources/fingerprint.ts";
import { appendRecordIn, readAppendRecord } from "../../../pipeline/stages/append.ts";
import type { StageContext } from "../../../pipeline/stages/context.ts";
import { type FlowPlan, readPlan } from "../../../pipeline/stages/flow-steps.ts";
import { openStagingDuck } from "../../../pipeline/store/duck/duck.ts";
import {
  readStagingRecord,
  type StagingRecord,
  stagingLayout,
  writeStagingRecord,
} from "../../../pipeline/store/snapshot/staging-layout.ts";
import { serviceConfig } from "../../config.ts";
import { affinityWindowMs, stepJobsAfter } from "../../queue/flow.ts";
import {
  addChildren,
  type FlowStep,
  partitionsListed,
  tickersPerPartition,
  WORKER,
  workerThreads,
} from "../flow-worker.ts";
import { addAppendChildren, flowDecision, stageAppend } from "./append.ts";
import { flowHost, flowStageContext } from "./flow-host.ts";
import { splitFundamentals } from "./fundamentals.ts";

export const ingestStep: FlowStep<"ingest"> = async (job, data, f) => {
  const { deps, out } = f;
  if (!job.parent?.id) throw new Error(`ingest job ${job.id} has no parent: it is added only as part of a run's flow`);
  const layout = stagingLayout(out);
  // An earlier attempt of this very job staged everything and may have added some partitions: the
  // rest are added below.
  const again = readStagingRecord("run", layout.run)?.ingestJob === job.timestamp;
  const kind = await ingestKind(job, data, f, again);
  if (kind === "append") {
    f.signal?.throwIfAborted();
    const record = readAppendRecord(out);
    await addAppendChildren(job, data, f, record);
    deps.log.info({ job: job.id, partitions: record.returns.ranges.length }, "append staged; its jobs added");
    return { done: job.id! };
  }
  // The partitioned steps this job fanned out already (the stock metrics, as soon as their inputs are staged).
  const added: PartitionedName[] = [];
  const plan = again ? readPlan(out) : await stageRun(job, data, f, added);
  // Taken for an append, it is a full run: the fundamentals job left the split to this one.
  if (kind === "full") await splitFundamentals(job, data, f);
  // A cancelled job adds no backtests: the flow cannot publish without them, and fails with this job.
  f.signal?.throwIfAborted();
  // The other partitioned steps after ingest (the backtests read companies.parquet, with ids, and
  // the plan): added last, the backtests for this worker when it holds the universe they read.
  await addChildren(job, data, f, {
    partitions: partitionsListed(out, "ingest", added),
    steps: stepJobsAfter("ingest"),
    ...(f.universes.holds(out)
      ? { affinity: WORKER, affinityMs: affinityWindowMs(plan.counts.companies, plan.counts.priceDates) }
      : {}),
  });
  deps.log.info(
    { job: job.id, partitions: plan.ranges.length, portfolios: plan.portfolioIds.length },
    "run staged; partition jobs added",
  );
  return { done: job.id! };
};

type IngestArgs = Parameters<FlowStep<"ingest">>;

/**
 * "append" (staged), "full" (a full run of a flow taken for an append: this job splits the
 * fundamentals) or null (a full run: the fundamentals job splits them). Decided once for the flow
 * (processors/append.ts flowDecision): a full run's stays one whatever is published since.
 */
async function ingestKind(job: IngestArgs[0], data: IngestArgs[1], f: IngestArgs[2], again: boolean) {
  const { decision, plan } = await flowDecision(f, data.sourceDir);
  if (decision.kind === "full") return null;
  if (decision.fellBack) return "full";
  // An earlier attempt staged the append (its record written before the run record).
  if (again) return appendRecordIn(f.out) ? "append" : "full";
  return stageAppend(job, data, f, plan);
}

/** Stages the source into the run's folder and records it (the run record); `added`: the steps it fanned out. */
async function stageRun(job: IngestArgs[0], data: IngestArgs[1], f: IngestArgs[2], added: PartitionedName[]) {
  const { deps, out } = f;
  const layout = stagingLayout(out);
  const t0 = performance.now();
  // The folder is this flow's own (named by its run id); the fundamentals job writes into it too.
  mkdirSync(out, { recursive: true });
  // The published snapshot is read (unchanged tables are linked from it): leased while this stage runs.
  const base = f.run.leaseBase();
  await deps.catalog.refresh();
  const db = await openStagingDuck(out, {
    threads: String(workerThreads()),
    memory_limit: serviceConfig().stagingMemory,
  });
  let staged: { plan: FlowPlan; sourceId: string };
  try {
    const ctx = flowStageContext(f, db.conn, f.run.snapshotDir(base), {
      // the source tables are written, and the price panel read, on connections of their own
      connect: db.connect,
      progress: f.progress,
      tickersPerPartition: tickersPerPartition(),
    });
    staged = await ingestHashed(ctx, job, data, f, added);
  } finally {
    f.run.releaseLease();
    db.dispose();
  }
  const record: StagingRecord<"run"> = {
    ingestJob: job.timestamp,
    baseVersion: base?.version ?? 0,
    ingestMs: Math.round(performance.now() - t0),
    startedAt: job.timestamp,
    sourceId: staged.sourceId,
  };
  writeStagingRecord("run", layout.run, record);
  return staged.plan;
}

/**
 * The ingest step on `ctx`, the source's files hashed meanwhile. The stock metric partitions are
 * added as soon as their inputs are staged: other workers compute them while this job assigns the
 * company ids and writes the plan.
 */
async function ingestHashed(
  ctx: StageContext,
  job: IngestArgs[0],
  data: IngestArgs[1],
  f: IngestArgs[2],
  added: PartitionedName[],
): Promise<{ plan: FlowPlan; sourceId: string }> {
  // The source's files are hashed while DuckDB stages them (this thread waits on DuckDB most of
  // that time), not after: 1.5 s at 5,000 x 25 that the job no longer ends with.
  // The hash is what the snapshot records as its source (the jobs are named by the files' stamp).
  const stamp = sourceStamp(data.sourceDir);
  const hashed = sourceFilesAsync(data.sourceDir);
  hashed.catch(() => undefined); // awaited below; not an unhandled rejection if ingest fails first
  const host = flowHost(ctx, data.sourceDir, f, {
    users: () => f.deps.catalog.allUserPortfolios(),
    signal: f.signal,
    partitionsReady: async (name, inputs, written) => {
      await written; // the jobs read prices.parquet, maybe on another machine
      await addChildren(job, data, f, { partitions: { [name]: inputs } });
      added.push(name);
    },
  });
  await KIND_STAGES.full.ingest(host);
  const plan = host.plan!;
  const files = await hashed;
  // A file written while it was read: neither the tables nor the hash are of one version (retried).
  if (sourceStamp(data.sourceDir) !== stamp)
    throw new Error(
      `the source ${data.sourceDir} changed while the run read it (a file's size or modification time moved)`,
    );
  // What a later nightly append compares its source with.
  writeSourceRecord(ctx.out, files.files);
  return { plan, sourceId: files.id };
}
