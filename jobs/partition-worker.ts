// Worker-thread entry: runs partition jobs posted by jobs/partition-pool.ts one at a time. Compiled
// to dist/ with everything else; from the sources the pool starts it with tsx's loader.
import { parentPort } from "node:worker_threads";
import { runPartitionJob, type PartitionJob } from "../pipeline/stages/partition-jobs.ts";

const port = parentPort!;
port.on("message", async ({ id, job }: { id: number; job: PartitionJob }) => {
  try {
    port.postMessage({ id, ok: true, result: await runPartitionJob(job) });
  } catch (e) {
    const err = e as Error | undefined;
    port.postMessage({ id, ok: false, error: { name: err?.name, message: err?.message ?? String(e), stack: err?.stack } });
  }
});
