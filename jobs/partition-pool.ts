// Runs partition jobs of one stage on worker threads (both cores of the in-process runner), or
// inline when `workers` is 0. The jobs are the same plain-JSON jobs a queue would carry.
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import { runPartitionsInline, type PartitionJob } from "../pipeline/stages/partition-jobs.ts";

/** Worker threads for a run: `PIPELINE_WORKERS` when set, else one per core (at most 4). */
export function defaultWorkers(): number {
  const env = process.env.PIPELINE_WORKERS;
  if (env !== undefined && env !== "") return Math.max(0, Number.parseInt(env, 10) || 0);
  return Math.min(4, availableParallelism());
}

export class PartitionJobError extends Error {
  constructor(message: string, readonly stack_?: string) {
    super(message);
    this.name = "PartitionJobError";
  }
}

/** Results in job order. A failed job rejects the whole batch after the others stop. */
export async function runPartitionJobs<R>(jobs: PartitionJob[], workers: number, onDone?: (done: number) => void): Promise<R[]> {
  if (workers <= 0 || jobs.length <= 1) return runPartitionsInline<R>(jobs, onDone);
  const results = new Array<R>(jobs.length);
  const n = Math.min(workers, jobs.length);
  const pool = Array.from({ length: n }, () => new Worker(new URL("./partition-worker.mjs", import.meta.url)));
  let next = 0;
  let done = 0;
  try {
    await Promise.all(
      pool.map(
        (w) =>
          new Promise<void>((resolve, reject) => {
            const take = () => {
              if (next >= jobs.length) return resolve();
              const id = next++;
              w.postMessage({ id, job: jobs[id] });
            };
            w.on("message", (m: { id: number; ok: boolean; result?: R; error?: { message: string; stack?: string } }) => {
              if (!m.ok) return reject(new PartitionJobError(`partition job ${jobs[m.id].stage} #${m.id} failed: ${m.error?.message}`, m.error?.stack));
              results[m.id] = m.result as R;
              onDone?.(++done);
              take();
            });
            w.on("error", reject);
            w.on("exit", (code) => (code !== 0 ? reject(new PartitionJobError(`partition worker exited with code ${code}`)) : undefined));
            take();
          }),
      ),
    );
    return results;
  } finally {
    await Promise.all(pool.map((w) => w.terminate()));
  }
}
