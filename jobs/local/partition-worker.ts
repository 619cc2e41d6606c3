// Worker-thread entry: runs partition jobs posted by jobs/local/partition-pool.ts one at a time. Compiled
// to dist/ with everything else; from the sources the pool starts it with tsx's loader.
import { parentPort } from "node:worker_threads";
import { LevelsCache } from "../../pipeline/stages/metrics-partition.ts";
import { type PartitionJob, runPartitionJob } from "../../pipeline/stages/partition-jobs.ts";
import { closeScratch } from "../../pipeline/store/duck/scratch.ts";

// This thread's: it runs a run's partitions one after another, each reading the same benchmark levels.
const state = { levels: new LevelsCache() };

const port = parentPort!;
port.on("message", async ({ id, job, close }: { id: number; job?: PartitionJob; close?: boolean }) => {
  if (close) {
    // Native memory of the scratch database is freed here, not left to thread teardown.
    await closeScratch().catch(() => undefined);
    return port.postMessage({ id, ok: true, closed: true });
  }
  try {
    port.postMessage({ id, ok: true, result: await runPartitionJob(job!, state) });
  } catch (e) {
    const err = e as Error | undefined;
    port.postMessage({
      id,
      ok: false,
      error: { name: err?.name, message: err?.message ?? String(e), stack: err?.stack },
    });
  }
});
