// The enqueuing command's wait: polls the job (no event stream to lose when Redis restarts; the
// queue's completion event only cuts a poll interval short), shows
// its progress, and always ends — with the result, the job's failure, a timeout, or a clear word
// that Redis lost the job. The timeout holds whatever Redis does: every call to it is bounded by
// the time left, and so is closing the connections at the end (a QueueEvents whose Redis is gone
// never finishes closing). A job lost with Redis (restarted without persistence) is looked for in
// the store first: its publish in the manifest's log means done; a live staging folder carrying its
// id means a worker still computes it; otherwise it is enqueued again, once.
import { type Job, type Queue, QueueEvents } from "bullmq";
import { liveStagings, type PublishKind, readManifest, readMeta } from "../../pipeline/store/snapshot/snapshots.ts";
import type { Enqueued } from "./enqueue.ts";
import type { JobProgress, JobResult } from "./job-types.ts";
import { closeQuietly } from "./queue.ts";

export class JobFailedError extends Error {
  /** For an HTTP caller (e.g. a GraphQL mutation waiting on its rebalance): the work upstream failed. */
  readonly status: number = 502;
  constructor(message: string) {
    super(message);
    this.name = "JobFailedError";
  }
}
export class JobTimeoutError extends JobFailedError {
  override readonly status = 504;
  constructor(message: string) {
    super(message);
    this.name = "JobTimeoutError";
  }
}
export class JobLostError extends JobFailedError {
  constructor(message: string) {
    super(message);
    this.name = "JobLostError";
  }
}

export interface WaitOptions {
  dataDir: string;
  kind: PublishKind;
  timeoutMs: number;
  /** When the wait ends at the latest (epoch ms); default now + timeoutMs. */
  deadline?: number;
  pollMs?: number;
  onProgress?: (p: JobProgress) => void;
  /** One line per change of situation (waiting for a worker, Redis away, retrying…). */
  onNote?: (line: string) => void;
  /** Adds the job again (same id) after Redis lost it. */
  reenqueue: () => Promise<Job>;
  maxReenqueues?: number;
  /** Progress of a job that reports none itself (a flow's parent: its finished children). */
  progressOf?: (job: Job) => Promise<JobProgress | null>;
  /** A lost job is not looked for among live staging folders (a flow: nothing outside Redis carries it on). */
  lostMeansGone?: boolean;
}

const sleep = (ms: number) => new Promise((res) => setTimeout(res, ms));

function within<T>(p: Promise<T>, ms: number): Promise<T> {
  return Promise.race([p, sleep(ms).then(() => Promise.reject(new Error(`no answer from Redis within ${ms} ms`)))]);
}

/** Closes a queue or event stream, giving up after `ms` (its connection is then left to be dropped). */
export async function closeWithin(c: Parameters<typeof closeQuietly>[0], ms = 1_000): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([closeQuietly(c), new Promise<void>((res) => (timer = setTimeout(res, ms)))]);
  clearTimeout(timer);
}

export async function awaitJob(queue: Queue, enq: Enqueued, opts: WaitOptions): Promise<JobResult> {
  const id = enq.job.id!;
  const ended = jobEnded(queue, id);
  try {
    return await poll(queue, enq, opts, ended.next);
  } finally {
    await closeWithin(ended.events);
  }
}

/**
 * A wake-up when job `id` completes or fails, from the queue's event stream: the poll below reads
 * the result at once instead of sitting out the rest of its interval (a quarter second on average,
 * 4 % of a sample run). Only a wake-up: the poll decides, so an event lost with Redis costs one interval.
 */
function jobEnded(queue: Queue, id: string): { next: () => Promise<void>; events: QueueEvents } {
  const events = new QueueEvents(queue.name, { connection: queue.opts.connection, prefix: queue.opts.prefix });
  events.on("error", () => undefined); // Redis away: the poll says so
  let wake: () => void = () => undefined;
  let woken = new Promise<void>((res) => (wake = res));
  const on = ({ jobId }: { jobId: string }) => jobId === id && wake();
  events.on("completed", on);
  events.on("failed", on);
  return {
    // the current wake-up, then a fresh one for the next interval
    next: () => {
      const p = woken;
      p.then(() => (woken = new Promise<void>((res) => (wake = res))));
      return p;
    },
    events,
  };
}

/** Waits `ms`, or less when `early` settles first. */
async function nap(ms: number, early: Promise<void>): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([new Promise<void>((res) => (timer = setTimeout(res, ms))), early]);
  clearTimeout(timer);
}

async function poll(queue: Queue, enq: Enqueued, opts: WaitOptions, ended: () => Promise<void>): Promise<JobResult> {
  const w = new JobPoll(queue, enq, opts, ended);
  for (;;) {
    const r = await w.round();
    if (r !== undefined) return r;
  }
}

/** One wait's state between polls: what was last said, seen and tried. */
class JobPoll {
  readonly id: string;
  readonly deadline: number;
  lastNote = "";
  lastProgress = "";
  lastState = "waiting";
  /** Since when Redis has not answered (null: it answered last time). */
  unreachableSince: number | null = null;
  reenqueues = 0;

  constructor(
    readonly queue: Queue,
    readonly enq: Enqueued,
    readonly opts: WaitOptions,
    readonly ended: () => Promise<void>,
  ) {
    this.id = enq.job.id!;
    this.deadline = opts.deadline ?? Date.now() + opts.timeoutMs;
  }

  // Every call to Redis and every pause ends by the deadline at the latest.
  left = () => Math.max(1, this.deadline - Date.now());
  bounded = <T>(p: Promise<T>, ms = 5_000) => within(p, Math.min(ms, this.left()));
  note(line: string): void {
    if (line !== this.lastNote) this.opts.onNote?.(line);
    this.lastNote = line;
  }
  nap = () => nap(Math.min(this.opts.pollMs ?? 500, this.left()), this.ended());
  /** The job's result if the manifest's log says it published. */
  published(): JobResult | undefined {
    const { dataDir, kind } = this.opts;
    const id = publishedBy(dataDir, this.id, this.enq.sinceVersion, kind);
    return id ? { snapshotId: id, totalMs: readMeta(dataDir, id).timingsMs.total ?? 0 } : undefined;
  }

  /** One poll: the result, a thrown failure, or undefined to poll again. */
  async round(): Promise<JobResult | undefined> {
    if (Date.now() >= this.deadline)
      throw timedOut(this.id, this.opts.timeoutMs, this.lastState, this.unreachableSince);
    let job: Job | null | undefined;
    let state: string;
    try {
      // Redis answers a poll in milliseconds: 2 s without one means it is away, said at once rather
      // than after a 5 s wait that a short --timeout could cut short before the note
      job = await this.bounded(this.queue.getJob(this.id), 2_000);
      state = job ? await this.bounded(job.getState(), 2_000) : "unknown";
      this.unreachableSince = null;
    } catch {
      return this.unreachable();
    }
    if (state === "unknown") return this.lost();
    this.lastState = state;
    // The job was read before its state: fetched while active, its returnvalue is still null then.
    if (state === "completed")
      return (job!.returnvalue ?? (await this.bounded(this.queue.getJob(this.id)))?.returnvalue) as JobResult;
    if (state === "failed") throw await this.failed(job!);
    await this.report(state, job!);
    await this.nap();
    return undefined;
  }

  async unreachable(): Promise<JobResult | undefined> {
    if (Date.now() >= this.deadline && this.unreachableSince === null) return undefined; // cut short by the deadline
    this.unreachableSince ??= Date.now();
    // A worker may still finish the job and publish while Redis is away: the manifest says so.
    const done = this.published();
    if (done) return done;
    this.note(`Redis at the queue is unreachable; still waiting for job ${this.id} (last seen ${this.lastState})`);
    await sleep(Math.min(1_000, this.left()));
    return undefined;
  }

  /** Redis has no such job: published already, still computed by a worker, or enqueued again. */
  async lost(): Promise<JobResult | undefined> {
    const done = this.published();
    if (done) return done;
    const { opts, id } = this;
    if (!opts.lostMeansGone && liveStagings(opts.dataDir).some((s) => s.job === id))
      this.note(`Redis lost job ${id} (restarted without persistence?); a worker is still computing it`);
    else if (this.reenqueues < (opts.maxReenqueues ?? 1)) {
      this.reenqueues++;
      this.note(
        `job ${id} vanished from Redis (restarted without persistence?) before any ` +
          `worker published it; enqueued again`,
      );
      await this.bounded(opts.reenqueue(), 10_000).catch(() => undefined); // unreachable again: the next round says so
    } else
      throw new JobLostError(
        `job ${id} vanished from Redis (restarted without persistence?) ${this.reenqueues} time(s); nothing was ` +
          `published by it — run the command again`,
      );
    this.lastState = "lost";
    await this.nap();
    return undefined;
  }

  async failed(job: Job): Promise<JobFailedError> {
    const current = readManifest(this.opts.dataDir)?.snapshotId;
    // Read again: fetched before it failed (e.g. a flow's parent still waiting for its children), it carries no
    // reason yet.
    const failed = (await this.bounded(this.queue.getJob(this.id)).catch(() => null)) ?? job;
    return new JobFailedError(
      `job ${this.id} ${await failure(this.queue, failed, this.bounded)}\n` +
        `the published snapshot is unchanged (${current ?? "none yet"})`,
    );
  }

  /** Says where a job still underway stands, and passes its progress on when it moved. */
  async report(state: string, job: Job): Promise<void> {
    const id = this.id;
    if (state === "delayed" && job.attemptsMade > 0)
      this.note(
        `attempt ${job.attemptsMade} of job ${id} failed ` +
          `(${String(job.failedReason).split("\n")[0]}); retrying after a backoff`,
      );
    else if (state === "waiting" || state === "prioritized" || state === "waiting-children") {
      const workers = await this.bounded(this.queue.getWorkersCount()).catch(() => -1);
      this.note(
        workers === 0
          ? `job ${id} waits: no pipeline worker is connected (npm run pipeline -- worker)`
          : state === "waiting-children"
            ? `job ${id} waits for its partition jobs`
            : `job ${id} queued`,
      );
    } else if (state === "active") this.note(`job ${id} running`);
    const p = this.opts.progressOf
      ? await this.bounded(this.opts.progressOf(job)).catch(() => null)
      : (job.progress as JobProgress | number);
    if (typeof p === "object" && p && JSON.stringify(p) !== this.lastProgress) {
      this.lastProgress = JSON.stringify(p);
      this.opts.onProgress?.(p);
    }
  }
}

/** The timeout's message: where the job stood when last seen, and whether Redis was answering. */
function timedOut(id: string, timeoutMs: number, lastState: string, unreachableSince: number | null): JobTimeoutError {
  const waited = `gave up waiting for job ${id} after ${Math.round(timeoutMs / 1000)} s`;
  if (unreachableSince === null)
    return new JobTimeoutError(
      `${waited} (last seen ${lastState}); nothing was published by it so far, ` +
        "and it stays queued (see npm run pipeline -- status)",
    );
  const away = Math.round((Date.now() - unreachableSince) / 1000);
  return new JobTimeoutError(
    `${waited}: Redis at the queue has been unreachable for the last ${away} s (the job was last seen ${lastState}); ` +
      "nothing was published by it so far — once Redis is back, see npm run pipeline -- status",
  );
}

/** The snapshot this job published after `since`, found in the manifest's log. */
function publishedBy(dataDir: string, jobId: string, since: number, kind: PublishKind): string | null {
  const m = readManifest(dataDir);
  return m?.log?.find((e) => e.job === jobId && e.version > since && e.kind === kind)?.snapshotId ?? null;
}

/**
 * "failed for good after N attempt(s): reason". A flow's parent fails with "child <key> failed" and
 * no attempt of its own: the child's attempts and reason are what say why.
 */
async function failure(queue: Queue, job: Job, bounded: <T>(p: Promise<T>) => Promise<T>): Promise<string> {
  const reason = job.failedReason;
  const m = /child (\S+) failed/.exec(reason ?? "");
  const child = m ? await bounded(queue.getJob(m[1].split(":").at(-1)!)).catch(() => null) : null;
  if (!child?.failedReason) return `failed for good after ${job.attemptsMade} attempt(s): ${reason}`;
  return (
    `failed for good: its child job ${child.id} failed after ${child.attemptsMade} attempt(s): ` +
    `${child.failedReason}`
  );
}
