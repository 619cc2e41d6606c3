// A BullMQ worker running pipeline jobs with the same runner the in-process path uses, and the
// API's portfolio rebalances (jobs/rebalance-requests.ts).
import { UnrecoverableError, Worker, type Job } from "bullmq";
import { SourceRejectedError, formatReject } from "../pipeline/sources/report.ts";
import type { Log } from "../pipeline/stages/context.ts";
import type { Catalog } from "../pipeline/store/catalog/catalog.ts";
import { PIPELINE_QUEUE, redisConnection, type RunJobResult } from "./queue.ts";
import { rebalanceFromCatalog } from "./rebalance-requests.ts";
import { runPipeline } from "./runner.ts";
import { readManifest } from "../pipeline/store/snapshots.ts";

export interface WorkerDeps {
  redisUrl: string;
  dataDir: string;
  catalog: Catalog;
  log: Log;
  prefix?: string;
}

export function startPipelineWorker(deps: WorkerDeps): Worker {
  const worker = new Worker(
    PIPELINE_QUEUE,
    async (job: Job): Promise<RunJobResult> => {
      if (job.name === "rebalance") {
        // a user portfolio changed through the API: the catalog holds its current rules
        await deps.catalog.refresh();
        await rebalanceFromCatalog({ dataDir: deps.dataDir, catalog: deps.catalog, log: deps.log }, String(job.data.portfolioId));
        return { snapshotId: readManifest(deps.dataDir)?.snapshotId ?? "", totalMs: 0 };
      }
      if (job.name !== "run") throw new UnrecoverableError(`unknown job ${job.name}`);
      try {
        const { meta } = await runPipeline({
          dataDir: deps.dataDir,
          sourceDir: job.data.sourceDir,
          window: job.data.window,
          catalog: deps.catalog,
          log: deps.log,
          progress: (stage, done, total) => void job.updateProgress({ stage, done, total }),
        });
        return { snapshotId: meta.id, totalMs: meta.timingsMs.total };
      } catch (e) {
        // A bad source stays bad on retry: fail at once, with the report in the reason.
        if (e instanceof SourceRejectedError) throw new UnrecoverableError(`${e.message}\n${e.rejects.slice(0, 50).map(formatReject).join("\n")}`);
        throw e;
      }
    },
    // One run at a time per worker: a run is CPU-bound and publishes a whole snapshot.
    { connection: redisConnection(deps.redisUrl), concurrency: 1, prefix: deps.prefix },
  );
  worker.on("failed", (job, err) => deps.log.warn({ job: job?.id, err: err.message.split("\n")[0] }, "pipeline job failed"));
  worker.on("completed", (job, r: RunJobResult) => deps.log.info({ job: job.id, snapshot: r.snapshotId }, "pipeline job completed"));
  return worker;
}
