// A pipeline worker process for the fault tests, with short lock times so a killed worker's job is
// taken over in seconds: `node --import tsx worker-entry.ts` with REDIS_URL, DATA_DIR, QUEUE_PREFIX.
import { join } from "node:path";
import { startPipelineWorker } from "../../jobs/worker/worker.ts";
import { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { shareScratchOnMainThread } from "../../pipeline/store/duck/scratch.ts";

const env = process.env;
// as the CLI's worker does
shareScratchOnMainThread();
const catalog = await Catalog.open(join(env.DATA_DIR!, "catalog.duckdb"));
const line = (level: string) => (o: object, msg?: string) =>
  process.stderr.write(`${JSON.stringify({ level, pid: process.pid, msg, ...o })}\n`);
const worker = startPipelineWorker({
  redisUrl: env.REDIS_URL!,
  dataDir: env.DATA_DIR!,
  catalog,
  log: { info: line("info"), warn: line("warn") },
  prefix: env.QUEUE_PREFIX,
  lockDurationMs: 4_000,
  stalledIntervalMs: 1_000,
});
worker.on("completed", (job) =>
  process.stdout.write(`COMPLETED ${job.id}\nTIMES ${job.id} ${job.timestamp} ${job.finishedOn}\n`),
);
await worker.waitUntilReady();
process.stdout.write(`READY ${process.pid}\n`);
process.once("SIGTERM", () => void worker.close().then(() => process.exit(0)));
