// Worker-thread entry (plain JS so any Node can start it): registers tsx for the TypeScript
// stage modules, then runs partition jobs posted by jobs/partition-pool.ts one at a time.
import { parentPort } from "node:worker_threads";
import { register } from "tsx/esm/api";

register();
const { runPartitionJob } = await import("../pipeline/stages/partition-jobs.ts");
parentPort.on("message", async ({ id, job }) => {
  try {
    parentPort.postMessage({ id, ok: true, result: await runPartitionJob(job) });
  } catch (e) {
    parentPort.postMessage({ id, ok: false, error: { name: e?.name, message: e?.message ?? String(e), stack: e?.stack } });
  }
});
