// A `pipeline -- worker` process as jobs/cli/pipeline.ts makes it (webhook store, events step,
// delivery worker on the `webhooks` queue), with short lock times so a killed worker's job is
// taken over in seconds: `node --import tsx worker-entry.ts` with REDIS_URL, DATA_DIR, QUEUE_PREFIX.
import { loadConfig } from "../../jobs/config.ts";
import { createLogger } from "../../jobs/logger.ts";
import { workerWebhooks } from "../../jobs/webhooks/service.ts";
import { startPipelineWorker } from "../../jobs/worker/worker.ts";
import { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { shareScratchOnMainThread } from "../../pipeline/store/duck/scratch.ts";

const config = loadConfig();
shareScratchOnMainThread();
const catalog = await Catalog.at(config.catalogLocation);
const log = createLogger("warn");
const hooks = await workerWebhooks({ config: { ...config, redisUrl: config.redisUrl! }, catalog, log });
const worker = startPipelineWorker({
  redisUrl: config.redisUrl!,
  dataDir: config.dataDir,
  catalog,
  log,
  prefix: config.queuePrefix,
  events: hooks.sink,
  lockDurationMs: 4_000,
  stalledIntervalMs: 1_000,
});
worker.on("completed", (job) => process.stdout.write(`COMPLETED ${job.id}\n`));
await worker.waitUntilReady();
process.stdout.write(`READY ${process.pid}\n`);
process.once("SIGTERM", async () => {
  await worker.close();
  for (const c of hooks.closers) await c.close();
  process.exit(0);
});
