// What a worker does for each job of a run's flow (jobs/flow.ts): the steps of
// pipeline/stages/flow-steps.ts on the run's staging folder, which every job finds by the source
// version in its data. While a job runs it keeps the folder's heartbeat fresh; the heartbeat
// names no process (a flow has many, on many machines), so prune judges it by age alone and
// spares the folder between jobs for the stale time (2 minutes).
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join, resolve } from "node:path";
import type { Job } from "bullmq";
import type { Log, StageContext } from "../pipeline/stages/context.ts";
import { flowBacktestStep, flowIngestStep, flowMergeStep, readPlan, stockMetricParts } from "../pipeline/stages/flow-steps.ts";
import { runPartitionJob } from "../pipeline/stages/partition-jobs.ts";
import type { Catalog } from "../pipeline/store/catalog/catalog.ts";
import { openDuck } from "../pipeline/store/duck.ts";
import { takeLease } from "../pipeline/store/leases.ts";
import { startHeartbeat } from "../pipeline/store/liveness.ts";
import { newSnapshotId, publishSnapshot, readManifest, snapshotDir, stagingBeat, stagingPath, type SnapshotMeta } from "../pipeline/store/snapshots.ts";
import { addPartitionJobs, flowStagingId, runFlowIds, type AnalyticsData, type BacktestData, type FlowData } from "./flow.ts";
import type { JobResult } from "./job-types.ts";
import { defaultWorkers, PartitionPool } from "./partition-pool.ts";
import { closeQuietly, pipelineQueue } from "./queue.ts";
import { reapplyMissedRebalances } from "./reapply.ts";

export interface FlowDeps {
  redisUrl: string;
  prefix?: string;
  dataDir: string;
  catalog: Catalog;
  log: Log;
}

type Progress = StageContext["progress"];

/** What ingest records for the publish step besides the plan. */
interface RunRecord {
  /** The ingest job's creation time: a plan from another flow of the same source is not reused. */
  ingestJob: number;
  baseVersion: number;
  ingestMs: number;
  startedAt: number;
}
const recordPath = (out: string) => join(out, ".flow", "run.json");

/** Keeps the flow's staging heartbeat fresh while one of its jobs runs; leaves it in place after. */
function holdStaging(dataDir: string, stagingId: string, parentId: string, out: string): () => void {
  // host "flow@…": never this machine's hostname, so liveness goes by the file's age, not a pid;
  // recreated if pruned under a long stall, but not after the publish moved the folder away.
  const beat = startHeartbeat(stagingBeat(dataDir, stagingId), { job: parentId, host: `flow@${hostname()}`, whileExists: out });
  return () => beat.pause();
}

export async function processFlowJob(job: Job, deps: FlowDeps, progress: Progress): Promise<JobResult | { done: string }> {
  const data = job.data as FlowData;
  const ids = runFlowIds(data.sourceVersion);
  const stagingId = flowStagingId(data.sourceVersion);
  const out = stagingPath(deps.dataDir, stagingId);
  const release = holdStaging(deps.dataDir, stagingId, ids.parent, out);
  try {
    switch (job.name) {
      case "ingest":
        return await ingest(job, deps, out, progress);
      case "analytics": {
        readPlan(out); // a clear message when the staging folder is gone
        const { range } = job.data as AnalyticsData;
        progress?.("analytics", 0, 1);
        await runPartitionJob({ stage: "metrics", data: { out, range } });
        return { done: job.id! };
      }
      case "backtest": {
        const { portfolioId } = job.data as BacktestData;
        progress?.("backtest", 0, 1);
        await flowBacktestStep(out, portfolioId);
        return { done: job.id! };
      }
      case "publish":
        return await publish(job, deps, out, stagingId);
      default:
        throw new Error(`unknown flow job ${job.name}`);
    }
  } finally {
    release();
  }
}

async function ingest(job: Job, deps: FlowDeps, out: string, progress: Progress): Promise<{ done: string }> {
  const data = job.data as FlowData;
  if (!job.parent?.id) throw new Error(`ingest job ${job.id} has no parent: it is added only as part of a run's flow`);
  const prior = existsSync(recordPath(out)) ? (JSON.parse(readFileSync(recordPath(out), "utf8")) as RunRecord) : null;
  let plan;
  if (prior?.ingestJob === job.timestamp) {
    // An earlier attempt of this very job staged everything and may have added some partitions: add the rest.
    plan = readPlan(out);
  } else {
    const t0 = performance.now();
    rmSync(out, { recursive: true, force: true }); // another flow's leftovers of the same source
    mkdirSync(out, { recursive: true });
    const base = readManifest(deps.dataDir);
    await deps.catalog.refresh();
    const lease = base ? takeLease(deps.dataDir, base.snapshotId) : null;
    const db = await openDuck(":memory:", { memory_limit: process.env.PIPELINE_DUCKDB_MEMORY ?? "1536MB", temp_directory: `${out}.tmp` });
    const pool = new PartitionPool(defaultWorkers());
    try {
      const ctx: StageContext = {
        conn: db.conn,
        out,
        catalog: deps.catalog,
        log: deps.log,
        progress,
        runPartitions: (jobs, onDone) => pool.run(jobs, onDone),
        published: base ? snapshotDir(deps.dataDir, base.snapshotId) : undefined,
        tickersPerPartition: process.env.TICKERS_PER_PARTITION ? Number(process.env.TICKERS_PER_PARTITION) : undefined,
      };
      plan = await flowIngestStep(ctx, data.sourceDir, deps.catalog.allUserPortfolios());
    } finally {
      lease?.stop();
      await pool.close(true);
      db.close();
      rmSync(`${out}.tmp`, { recursive: true, force: true });
    }
    const record: RunRecord = { ingestJob: job.timestamp, baseVersion: base?.version ?? 0, ingestMs: Math.round(performance.now() - t0), startedAt: job.timestamp };
    writeFileSync(recordPath(out), JSON.stringify(record));
  }
  const queue = pipelineQueue(deps.redisUrl, deps.prefix);
  try {
    await addPartitionJobs(queue, { id: job.parent.id, queueKey: job.parent.queueKey }, data, plan.ranges, plan.portfolioIds);
  } finally {
    await closeQuietly(queue);
  }
  deps.log.info({ job: job.id, partitions: plan.ranges.length, portfolios: plan.portfolioIds.length }, "run staged; partition jobs added");
  return { done: job.id! };
}

async function publish(job: Job, deps: FlowDeps, out: string, stagingId: string): Promise<JobResult> {
  const data = job.data as FlowData;
  const record = JSON.parse(readFileSync(recordPath(out), "utf8")) as RunRecord;
  const t = performance.now();
  const plan = await flowMergeStep(out);
  if (stockMetricParts(out) !== plan.ranges.length) throw new Error(`stock metrics: ${stockMetricParts(out)} of ${plan.ranges.length} partitions in ${out}`);
  const total = Date.now() - record.startedAt;
  const meta: SnapshotMeta = {
    id: newSnapshotId(),
    createdAt: new Date().toISOString(),
    sourceId: data.sourceVersion,
    sourceDir: resolve(data.sourceDir),
    lastPriceDate: plan.lastPriceDate,
    counts: { companies: plan.counts.companies, priceDates: plan.counts.priceDates, ratings: plan.counts.ratings, portfolios: plan.portfolioIds.length, benchmarks: plan.counts.benchmarks },
    timingsMs: { ingest: record.ingestMs, merge: Math.round(performance.now() - t), total },
  };
  const manifest = await publishSnapshot(deps.dataDir, out, meta, { kind: "run", job: job.id });
  rmSync(stagingBeat(deps.dataDir, stagingId), { force: true });
  deps.log.info({ snapshot: meta.id, timingsMs: meta.timingsMs }, "snapshot published");
  await reapplyMissedRebalances({ dataDir: deps.dataDir, catalog: deps.catalog, log: deps.log, job: job.id }, record.baseVersion, manifest);
  return { snapshotId: meta.id, totalMs: total };
}
