// Delivery jobs without Redis: an in-process queue whose state is a journal file (one JSON line
// per added, retried or settled job), replayed at open so a restart resumes; a job id settled
// within the last week is not added again (a publish computed again sends no duplicate). It runs
// up to `concurrency` attempts at once and at most `perWebhook` to one webhook, so a slow
// receiver holds a few slots and the others' deliveries go on.
import { appendFile, readFile, rename, writeFile } from "node:fs/promises";
import { type AttemptDeps, attemptDelivery, type DeliveryJob, deliveryJobId } from "./attempt.ts";

const KEEP_SETTLED_MS = 7 * 24 * 3600_000;

interface Entry {
  job: DeliveryJob;
  /** The number of the next attempt (1-based). */
  attempt: number;
  dueAt: number;
}

type Line = { put: string; job: DeliveryJob; attempt: number; dueAt: number } | { done: string; at: number };

export class LocalDeliveryQueue {
  private jobs = new Map<string, Entry>();
  private settled = new Map<string, number>();
  private ready: string[] = [];
  private delayed = new Set<string>();
  private parked = new Map<string, string[]>();
  private inflight = new Map<string, number>();
  private running = 0;
  private timer: NodeJS.Timeout | null = null;
  private buf: string[] = [];
  private writing: Promise<void> = Promise.resolve();
  private closed = false;
  private idleWaiters: (() => void)[] = [];

  private constructor(
    private readonly file: string,
    private readonly deps: AttemptDeps,
  ) {}

  static async open(file: string, deps: AttemptDeps): Promise<LocalDeliveryQueue> {
    const q = new LocalDeliveryQueue(file, deps);
    await q.replay();
    q.pump();
    return q;
  }

  /** Adds the deliveries not already queued or settled; resolves once they are in the journal. */
  async add(jobs: DeliveryJob[]): Promise<number> {
    let n = 0;
    for (const job of jobs) {
      const id = deliveryJobId(job);
      if (this.jobs.has(id) || this.settled.has(id)) continue;
      this.put(id, { job, attempt: 1, dueAt: Date.now() });
      n++;
    }
    await this.write();
    this.pump();
    return n;
  }

  /** Jobs not yet settled. */
  get size(): number {
    return this.jobs.size;
  }

  /** Resolves when no job is left (tests, shutdown after a last publish). */
  idle(): Promise<void> {
    if (this.jobs.size === 0) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  /** Stops taking jobs, waits for the attempts in flight, writes the journal compacted. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    while (this.running > 0) await new Promise((r) => setTimeout(r, 20));
    await this.write();
    await this.compact();
  }

  private put(id: string, e: Entry): void {
    this.jobs.set(id, e);
    this.buf.push(JSON.stringify({ put: id, job: e.job, attempt: e.attempt, dueAt: e.dueAt } satisfies Line));
    if (e.dueAt <= Date.now()) this.ready.push(id);
    else this.delayed.add(id);
  }

  private settle(id: string): void {
    this.jobs.delete(id);
    const at = Date.now();
    this.settled.set(id, at);
    this.buf.push(JSON.stringify({ done: id, at } satisfies Line));
    void this.write();
    if (this.jobs.size === 0) for (const w of this.idleWaiters.splice(0)) w();
  }

  private write(): Promise<void> {
    const lines = this.buf;
    this.buf = [];
    if (lines.length) this.writing = this.writing.then(() => appendFile(this.file, `${lines.join("\n")}\n`));
    return this.writing;
  }

  private async replay(): Promise<void> {
    let text = "";
    try {
      text = await readFile(this.file, "utf8");
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    }
    for (const l of text.split("\n")) {
      if (!l) continue;
      let line: Line;
      try {
        line = JSON.parse(l) as Line;
      } catch {
        continue; // a line cut short by a crash: its job was not acknowledged as added
      }
      if ("put" in line) this.jobs.set(line.put, { job: line.job, attempt: line.attempt, dueAt: line.dueAt });
      else {
        this.jobs.delete(line.done);
        this.settled.set(line.done, line.at);
      }
    }
    await this.compact();
    const now = Date.now();
    for (const [id, e] of [...this.jobs].sort((a, b) => a[1].dueAt - b[1].dueAt))
      if (e.dueAt <= now) this.ready.push(id);
      else this.delayed.add(id);
  }

  /** The journal rewritten with what is live: the queued jobs and the last week's settled ids. */
  private async compact(): Promise<void> {
    const since = Date.now() - KEEP_SETTLED_MS;
    const lines: string[] = [];
    for (const [id, at] of this.settled)
      if (at >= since) lines.push(JSON.stringify({ done: id, at }));
      else this.settled.delete(id);
    for (const [id, e] of this.jobs) lines.push(JSON.stringify({ put: id, ...e }));
    await this.writing;
    await writeFile(`${this.file}.tmp`, lines.length ? `${lines.join("\n")}\n` : "");
    await rename(`${this.file}.tmp`, this.file);
  }

  /** Starts attempts while slots are free; due delayed jobs move to the ready list first. */
  private pump(): void {
    if (this.closed) return;
    this.promoteDue();
    while (this.running < this.deps.settings.concurrency && this.ready.length) {
      const id = this.ready.shift()!;
      const e = this.jobs.get(id);
      if (!e) continue;
      const hook = e.job.webhookId;
      if ((this.inflight.get(hook) ?? 0) >= this.deps.settings.perWebhook) {
        this.parked.set(hook, [...(this.parked.get(hook) ?? []), id]);
        continue;
      }
      void this.run(id, e);
    }
  }

  private promoteDue(): void {
    const now = Date.now();
    let next = Number.POSITIVE_INFINITY;
    for (const id of this.delayed) {
      const e = this.jobs.get(id);
      if (!e) this.delayed.delete(id);
      else if (e.dueAt <= now) {
        this.delayed.delete(id);
        this.ready.push(id);
      } else next = Math.min(next, e.dueAt);
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = Number.isFinite(next) ? setTimeout(() => this.pump(), Math.max(0, next - now) + 1) : null;
  }

  private async run(id: string, e: Entry): Promise<void> {
    const hook = e.job.webhookId;
    this.running++;
    this.inflight.set(hook, (this.inflight.get(hook) ?? 0) + 1);
    try {
      const r = await attemptDelivery(e.job, e.attempt, this.deps);
      if (r.retryInMs !== undefined)
        this.put(id, { job: e.job, attempt: e.attempt + 1, dueAt: Date.now() + r.retryInMs });
      else this.settle(id);
      void this.write();
    } catch {
      // the store could not be read: the same attempt again in a second
      this.put(id, { ...e, dueAt: Date.now() + 1000 });
    } finally {
      this.running--;
      this.inflight.set(hook, (this.inflight.get(hook) ?? 1) - 1);
      const waiting = this.parked.get(hook);
      if (waiting?.length) this.ready.unshift(waiting.shift()!);
      this.pump();
    }
  }
}
