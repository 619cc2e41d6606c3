// Runs partition jobs on worker threads (both cores of the in-process runner), or inline when
// the pool has no workers or a stage has one job. The jobs are the same plain-JSON jobs a queue
// would carry. Workers start with the first stage that has several jobs (a small source never
// pays for them), or earlier when asked (`warm`), and serve every later stage of the run; a stage may
// hand in its jobs while an earlier stage's still run (one queue, first come first served).
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import { type PartitionJob, runPartitionsInline } from "../../pipeline/stages/partition-jobs.ts";
import { serviceConfig } from "../config.ts";

/** Worker threads for a run: `PIPELINE_WORKERS` when set, else one per core (at most 4). */
export function defaultWorkers(): number {
  return serviceConfig().pipelineWorkers ?? Math.min(4, availableParallelism());
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

// dist/jobs/local/partition-pool.js starts dist/jobs/local/partition-worker.js; from the sources (tests, tsx)
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

/** The worker's reply to the job it runs, or its exit. */
function jobEndOf(w: Worker): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      w.off("message", onMessage);
      w.off("exit", done);
      resolve();
    };
    const onMessage = (m: { id: number }) => m.id >= 0 && done();
    w.on("message", onMessage);
    w.on("exit", done);
  });
}

type Reply = { id: number; ok: boolean; result?: unknown; error?: { message: string; stack?: string } };

/** One job of a batch: `index` is its place in the batch (named in errors). */
interface Task {
  job: PartitionJob;
  index: number;
  resolve: (result: unknown) => void;
  reject: (e: Error) => void;
}

export class PartitionPool {
  private workers: Worker[] = [];
  private idle: Worker[] = [];
  /** Jobs of every batch given, first come first served: a stage's batch may be given while an earlier one runs. */
  private queue: Task[] = [];
  private running = new Map<Worker, Task>();
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
    for (const w of this.workers) {
      // Replies to a close request (id −1) are closeScratchOf's.
      w.on("message", (m: Reply) => m.id >= 0 && this.finished(w, m));
      // A worker's error rejects the job it runs; between jobs it must not crash the process.
      w.on("error", (e: Error) => this.lost(w, e));
      w.on("exit", (code) => this.lost(w, new PartitionJobError(`partition worker exited with code ${code}`)));
      this.idle.push(w);
    }
  }

  /** Results in job order; the first failure rejects the batch (and closes the pool). */
  async run<R>(jobs: PartitionJob[], onDone?: (done: number) => void): Promise<R[]> {
    if (this.size <= 0 || jobs.length <= 1 || this.closed) return runPartitionsInline<R>(jobs, onDone);
    this.start();
    this.used = true;
    let done = 0;
    const results = jobs.map(
      (job, index) =>
        new Promise<R>((resolve, reject) => {
          const settle = (r: unknown) => {
            onDone?.(++done);
            resolve(r as R);
          };
          this.queue.push({ job, index, reject, resolve: settle });
        }),
    );
    this.dispatch();
    try {
      return await Promise.all(results);
    } catch (e) {
      // Jobs still running on other workers would write into a staging folder about to go.
      await this.close();
      throw e;
    }
  }

  private dispatch(): void {
    while (this.idle.length && this.queue.length) {
      const w = this.idle.shift()!;
      const t = this.queue.shift()!;
      this.running.set(w, t);
      w.postMessage({ id: t.index, job: t.job });
    }
  }

  private finished(w: Worker, m: Reply): void {
    const t = this.running.get(w);
    if (!t) return;
    this.running.delete(w);
    if (!m.ok) {
      t.reject(
        new PartitionJobError(`partition job ${t.job.stage} #${t.index} failed: ${m.error?.message}`, m.error?.stack),
      );
      return;
    }
    this.idle.push(w);
    t.resolve(m.result);
    this.dispatch();
  }

  /**
   * A worker that errs or exits fails the job it ran and every job still waiting (no worker may be left to run them).
   */
  private lost(w: Worker, e: Error): void {
    this.idle = this.idle.filter((x) => x !== w);
    const t = this.running.get(w);
    this.running.delete(w);
    t?.reject(e);
    for (const q of this.queue.splice(0)) q.reject(e);
  }

  /**
   * `graceful`: each idle worker first closes its scratch database (bounded wait), then stops. A second call waits for
   * the first.
   */
  close(graceful = false): Promise<void> {
    if (this.closing) return this.closing;
    this.closed = true;
    for (const q of this.queue.splice(0)) q.reject(new PartitionJobError("the partition pool was closed"));
    this.closing = this.stop(graceful);
    return this.closing;
  }

  private async stop(graceful: boolean): Promise<void> {
    await Promise.all(
      this.workers.map(async (w) => {
        // A worker stopped mid-job aborted the process: its DuckDB call, failing (a full disk) while
        // the thread was torn down, threw where no JavaScript could catch it (Napi::Error, exit 134).
        // So a job still running (another one failed first) is let finish before the worker stops.
        if (this.running.has(w)) await jobEndOf(w);
        // Workers warmed but never used (a run that failed early) have nothing to close.
        if (graceful && this.used) await closeScratchOf(w);
        await w.terminate();
      }),
    );
  }
}
