// Runs partition jobs on worker threads (both cores of the in-process runner), or inline when
// the pool has no workers or a stage has one job. The jobs are the same plain-JSON jobs a queue
// would carry. Workers start with the first stage that has several jobs (a small source never
// pays for them), or earlier when asked (`warm`), and serve every later stage of the run.
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
  constructor(
    message: string,
    readonly workerStack?: string,
  ) {
    super(message);
    this.name = "PartitionJobError";
  }
}

// dist/jobs/partition-pool.js starts dist/jobs/partition-worker.js; from the sources (tests, tsx)
// a small bootstrap registers tsx in the thread first (a worker does not inherit the loader).
const FROM_SOURCES = import.meta.url.endsWith(".ts");
const WORKER_ENTRY = new URL(FROM_SOURCES ? "./partition-worker-tsx.mjs" : "./partition-worker.js", import.meta.url);

const CLOSE_WAIT_MS = 2000;

function closeScratchOf(w: Worker): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      w.off("message", onMessage);
      w.off("exit", done);
      resolve();
    };
    const onMessage = (m: { closed?: boolean }) => m.closed && done();
    const timer = setTimeout(done, CLOSE_WAIT_MS);
    w.on("message", onMessage);
    w.on("exit", done);
    w.postMessage({ id: -1, close: true });
  });
}

type Reply = { id: number; ok: boolean; result?: unknown; error?: { message: string; stack?: string } };

export class PartitionPool {
  private workers: Worker[] = [];
  private closed = false;
  private closing: Promise<void> | null = null;
  /** Some worker was given a job: only then can a scratch database need closing. */
  private used = false;

  constructor(private readonly size: number) {}

  /** Starts the workers now: each spends a few hundred ms loading its modules, which can overlap other work. */
  warm(): void {
    if (this.size > 0) this.start();
  }

  private start(): void {
    if (this.workers.length || this.closed) return;
    this.workers = Array.from({ length: this.size }, () => new Worker(WORKER_ENTRY));
    // A worker's error rejects the batch it serves; between batches it must not crash the process.
    for (const w of this.workers) w.on("error", () => undefined);
  }

  /** Results in job order; the first failure rejects the batch. */
  async run<R>(jobs: PartitionJob[], onDone?: (done: number) => void): Promise<R[]> {
    if (this.size <= 0 || jobs.length <= 1 || this.closed) return runPartitionsInline<R>(jobs, onDone);
    this.start();
    this.used = true;
    const results = new Array<R>(jobs.length);
    let next = 0;
    let done = 0;
    const active = this.workers.slice(0, jobs.length);
    const listeners: (() => void)[] = [];
    try {
      await Promise.all(
        active.map(
          (w) =>
            new Promise<void>((resolve, reject) => {
              const take = () => {
                if (next >= jobs.length) return resolve();
                const id = next++;
                w.postMessage({ id, job: jobs[id] });
              };
              const onMessage = (m: Reply) => {
                if (!m.ok) return reject(new PartitionJobError(`partition job ${jobs[m.id].stage} #${m.id} failed: ${m.error?.message}`, m.error?.stack));
                results[m.id] = m.result as R;
                onDone?.(++done);
                take();
              };
              const onExit = (code: number) => reject(new PartitionJobError(`partition worker exited with code ${code}`));
              w.on("message", onMessage);
              w.on("error", reject);
              w.on("exit", onExit);
              listeners.push(() => {
                w.off("message", onMessage);
                w.off("error", reject);
                w.off("exit", onExit);
              });
              take();
            }),
        ),
      );
      return results;
    } catch (e) {
      // Jobs still running on other workers would write into a staging folder about to go.
      await this.close();
      throw e;
    } finally {
      for (const off of listeners) off();
    }
  }

  /** `graceful`: each idle worker first closes its scratch database (bounded wait), then stops. A second call waits for the first. */
  close(graceful = false): Promise<void> {
    if (this.closing) return this.closing;
    this.closed = true;
    return (this.closing = this.stop(graceful));
  }

  private async stop(graceful: boolean): Promise<void> {
    await Promise.all(
      this.workers.map(async (w) => {
        // Workers warmed but never used (a run that failed early) have nothing to close.
        if (graceful && this.used) await closeScratchOf(w);
        await w.terminate();
      }),
    );
  }
}
