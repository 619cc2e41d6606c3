// A nightly append's flow with its first two jobs driven by the test, on the real Redis and store:
// the `ingest` and `fundamentals` jobs each read the published snapshot, and a publish landing
// between their reads must not make them disagree (one decision per flow, `.flow/decision.json`);
// an ingest attempt that fails after it decided is retried by a worker and publishes what an
// unretried run does (the append's bytes, or a full run's tables after a fallback).
import { appendFileSync, cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Job, type Queue, Worker } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { splitAtDate } from "../../data/append-days.ts";
import { generateSample } from "../../data/generate.ts";
import { runPipeline } from "../../jobs/local/runner.ts";
import { parseJobData } from "../../jobs/queue/contracts.ts";
import { dispatchRun } from "../../jobs/queue/dispatch.ts";
import { PIPELINE_QUEUE, pipelineQueue, redisConnection } from "../../jobs/queue/queue.ts";
import { PROCESSORS } from "../../jobs/worker/processors/index.ts";
import type { ProcessorContext, WorkerDeps } from "../../jobs/worker/processors/types.ts";
import { startPipelineWorker } from "../../jobs/worker/worker.ts";
import { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { readManifest, readMeta, snapshotDir } from "../../pipeline/store/snapshot/snapshots.ts";
import { noRedis } from "../redis.ts";
import { cleanUpQueues, differingTables, fileHashes, silent, TEST_REDIS, waitFor } from "./jobs-fixture.ts";

const prefixBase = `test-append-flow-${process.pid}-${Date.now()}`;
const workers: Worker[] = [];
const closing: { close(): Promise<void> }[] = [];
afterAll(async () => {
  await Promise.all(closing.map((c) => c.close()));
  await cleanUpQueues(prefixBase, workers);
});
const tmp = (p: string) => mkdtempSync(join(tmpdir(), p));
const current = (dataDir: string) => snapshotDir(dataDir, readManifest(dataDir)!.snapshotId);

async function run(dataDir: string, sourceDir: string, env: Record<string, string> = {}) {
  const before = { ...process.env };
  Object.assign(process.env, env);
  try {
    const catalog = await Catalog.open(join(dataDir, "catalog.duckdb"));
    return await runPipeline({ dataDir, sourceDir, catalog, log: silent });
  } finally {
    process.env = before;
  }
}

type FirstStep = "ingest" | "fundamentals";
const TOKEN = "test-driven";

/**
 * A queued run of `sourceDir` whose ingest and fundamentals jobs the test takes off the queue (a
 * worker without a processor) and runs through the workers' own processors, when it says, with
 * `ctx` changed to fail an attempt; `worker()` then starts a real worker for the rest of the flow.
 */
async function drivenFlow(dataDir: string, sourceDir: string, name: string) {
  const prefix = `${prefixBase}-${name}`;
  const messages: string[] = [];
  // the jobs the worker completed, in order
  const completed: string[] = [];
  const log = {
    info: (o: unknown, msg?: string) => {
      messages.push(msg ?? "");
      if (msg === "pipeline job completed") completed.push(String((o as { job: string }).job));
    },
    warn: () => undefined,
  };
  const catalog = await Catalog.open(join(dataDir, "catalog.duckdb"));
  const deps: WorkerDeps = { redisUrl: TEST_REDIS, dataDir, catalog, log, prefix };
  const queue = pipelineQueue(TEST_REDIS, prefix);
  const taker = new Worker(PIPELINE_QUEUE, null, {
    connection: redisConnection(TEST_REDIS),
    prefix,
    lockDuration: 600_000,
  });
  closing.push(taker, queue);
  const published = dispatchRun({ dataDir, sourceDir, catalog, log: silent, redisUrl: TEST_REDIS, prefix, flow: true });
  published.catch(() => undefined);
  const jobs: Partial<Record<FirstStep, Job>> = {};
  await waitFor("the flow's ingest and fundamentals jobs", async () => {
    const j = await taker.getNextJob(TOKEN, { block: false });
    if (j) jobs[j.name as FirstStep] = j;
    return jobs.ingest && jobs.fundamentals;
  });
  const ctx = (more: Partial<ProcessorContext>): ProcessorContext => ({
    deps,
    progress: () => undefined,
    token: TOKEN,
    queue: () => queue,
    ...more,
  });
  /** Runs the job's processor on the job as it is (held, not moved): the error it threw, or null. */
  const attempt = async (n: FirstStep, more: Partial<ProcessorContext> = {}) => {
    const job = jobs[n]!;
    try {
      return { result: await PROCESSORS[n](job, parseJobData(n, job.data), ctx(more)), error: null };
    } catch (e) {
      return { result: null, error: e as Error };
    }
  };
  return {
    messages,
    completed,
    queue,
    deps,
    attempt,
    /** Runs the job's processor to its end: the job completed, or failed (retried by a worker) when it throws. */
    async step(n: FirstStep, more: Partial<ProcessorContext> = {}) {
      const { result, error } = await attempt(n, more);
      if (result) await jobs[n]!.moveToCompleted(result, TOKEN, false);
      else await jobs[n]!.moveToFailed(error!, TOKEN, false);
      return error;
    },
    worker() {
      workers.push(startPipelineWorker(deps));
      return published;
    },
  };
}

/** A queue handle whose first single `add` (the append's backtest job) fails: the attempt dies after its partitions. */
function failingFirstAdd(queue: Queue): Queue {
  let failed = false;
  return new Proxy(queue, {
    get(target, prop) {
      if (prop === "add" && !failed)
        return () => {
          failed = true;
          return Promise.reject(new Error("test: Redis went away while the append's jobs were added"));
        };
      const v = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

/** A log whose line `line` (ingest's last: every job added) throws: the attempt dies right there. */
function dieOnLine(log: WorkerDeps["log"], line: string): WorkerDeps["log"] {
  return {
    ...log,
    info: (o, msg) => {
      if (msg === line) throw new Error(`test: the worker died at "${line}"`);
      log.info(o, msg);
    },
  };
}

/** A progress callback that throws once at the first stage starting with `stage`: the attempt dies right there. */
function dieAt(stage: string): ProcessorContext["progress"] {
  let died = false;
  return (s) => {
    if (!died && s.startsWith(stage)) {
      died = true;
      throw new Error(`test: the worker died at "${s}"`);
    }
  };
}

describe.skipIf(noRedis)("a nightly append's flow", () => {
  // 30 companies × 2 years, the last five weeks held back (appended); `edited` is the appended
  // source with one old close changed (no append of either); `late` moves a history row to the end.
  let split: Awaited<ReturnType<typeof splitAtDate>>;
  let edited = "";
  let late = { history: "", source: "" };
  const full: Record<string, string> = {};
  let appendedInline = "";
  beforeAll(async () => {
    const src = tmp("append-flow-src-");
    await generateSample(src, { companies: 30, years: 2, vendorRatings: true });
    split = await splitAtDate(src, tmp("append-flow-split-"), "2025-11-26");
    edited = editedCopy(split.appended);
    late = lateCopy(split.history);
    for (const [k, s] of [
      ["appended", split.appended],
      ["late", late.source],
    ]) {
      full[k] = tmp("append-flow-full-");
      await run(full[k], s, { PIPELINE_APPEND: "0" });
    }
    appendedInline = tmp("append-flow-inline-");
    await run(appendedInline, split.history);
    await run(appendedInline, split.appended);
    expect(readMeta(appendedInline, readManifest(appendedInline)!.snapshotId).timingsMs.append).toBeGreaterThan(0);
  }, 240_000);

  /** The flow published a full run's snapshot: the tables of the one in data folder `reference`, no append. */
  async function expectFullRun(dataDir: string, r: { snapshotId: string }, reference: string) {
    expect(readManifest(dataDir)!.snapshotId).toBe(r.snapshotId);
    expect(readMeta(dataDir, r.snapshotId).timingsMs.append).toBeUndefined();
    expect(await differingTables(current(reference), current(dataDir))).toEqual([]);
  }

  /** Published as an append, its files byte-identical to the inline append's (meta.json aside). */
  function expectAppendBytes(dataDir: string, r: { snapshotId: string }) {
    expect(readMeta(dataDir, r.snapshotId).timingsMs.append).toBeGreaterThan(0);
    expect(fileHashes(current(dataDir))).toEqual(fileHashes(current(appendedInline)));
  }

  it("fundamentals decided an append, then a publish made it none: ingest runs the full run and splits", async () => {
    const dataDir = tmp("append-flow-a-");
    await run(dataDir, split.history);
    const f = await drivenFlow(dataDir, split.appended, "a");
    expect(await f.step("fundamentals")).toBeNull();
    expect(f.messages).toContain("a nightly append: the fundamentals are left to its ingest");
    // Between the two jobs' reads: a snapshot the flow's source does not continue.
    await run(dataDir, edited);
    expect(await f.step("ingest")).toBeNull();
    await expectFullRun(dataDir, await f.worker(), full.appended);
    expect(f.messages).toContain("the source does not continue the published snapshot: full run");
  }, 180_000);

  it("fundamentals decided a full run, then a publish made it an append: ingest runs the full run", async () => {
    const dataDir = tmp("append-flow-b-");
    const f = await drivenFlow(dataDir, split.appended, "b");
    expect(await f.step("fundamentals")).toBeNull();
    expect(f.messages.filter((m) => m.startsWith("fundamentals split"))).toHaveLength(1);
    await run(dataDir, split.history);
    expect(await f.step("ingest")).toBeNull();
    await expectFullRun(dataDir, await f.worker(), full.appended);
    expect(f.messages).not.toContain("append staged; its jobs added");
  }, 180_000);

  it("ingest retried after its append's partitions were added publishes the unretried append's bytes", async () => {
    const dataDir = tmp("append-flow-r1-");
    await run(dataDir, split.history);
    const f = await drivenFlow(dataDir, split.appended, "r1");
    const failing = failingFirstAdd(f.queue);
    expect(await f.step("ingest", { queue: () => failing })).toBeInstanceOf(Error);
    // The attempt added the stock-metrics jobs (prioritized: ticker ranges) before it died.
    const added = await f.queue.getJobs(["waiting", "prioritized"]);
    expect(added.filter((j) => j.name === "analytics").length).toBeGreaterThan(0);
    expect(added.filter((j) => j.name === "backtest")).toEqual([]);
    expect(await f.step("fundamentals")).toBeNull();
    const r = await f.worker();
    expectAppendBytes(dataDir, r);
  }, 180_000);

  it("ingest retried after adding every job of the append, done meanwhile, gives the same bytes", async () => {
    const dataDir = tmp("append-flow-r1b-");
    await run(dataDir, split.history);
    const f = await drivenFlow(dataDir, split.appended, "r1b");
    expect(await f.step("fundamentals")).toBeNull();
    // The attempt dies once every job is added; they all run before the retry (the job held meanwhile).
    const log = dieOnLine(f.deps.log, "append staged; its jobs added");
    const first = await f.attempt("ingest", { deps: { ...f.deps, log } });
    expect(first.error?.message).toMatch(/^test: /);
    const published = f.worker();
    await waitFor("the append's backtest done", () => f.completed.some((j) => j.startsWith("backtest.")));
    expect(await f.step("ingest")).toBeNull();
    const r = await published;
    expectAppendBytes(dataDir, r);
  }, 180_000);

  it("ingest retried after dying halfway through staging an append gives the unretried append's bytes", async () => {
    const dataDir = tmp("append-flow-r2-");
    await run(dataDir, split.history);
    const f = await drivenFlow(dataDir, split.appended, "r2");
    expect(await f.step("fundamentals")).toBeNull();
    // The published prices and returns parts are linked into the folder by then.
    expect(await f.step("ingest", { progress: dieAt("append: returns and backtests") })).toBeInstanceOf(Error);
    const r = await f.worker();
    expectAppendBytes(dataDir, r);
  }, 180_000);

  it("ingest retried after falling back to a full run publishes it, with a publish between the attempts", async () => {
    const dataDir = tmp("append-flow-r3-");
    await run(dataDir, late.history);
    const f = await drivenFlow(dataDir, late.source, "r3");
    expect(await f.step("fundamentals")).toBeNull();
    expect(f.messages).toContain("a nightly append: the fundamentals are left to its ingest");
    // Staged as a full run (its run record written), it dies as it starts splitting the fundamentals.
    expect(await f.step("ingest", { progress: dieAt("fundamentals:") })).toBeInstanceOf(Error);
    expect(f.messages).toContain("the source does not continue the published snapshot: full run");
    await run(dataDir, edited);
    await expectFullRun(dataDir, await f.worker(), full.late);
  }, 180_000);

  it("ingest retried after falling back and adding every job, done meanwhile, publishes the full run", async () => {
    const dataDir = tmp("append-flow-r4-");
    await run(dataDir, late.history);
    const f = await drivenFlow(dataDir, late.source, "r4");
    expect(await f.step("fundamentals")).toBeNull();
    const log = dieOnLine(f.deps.log, "run staged; partition jobs added");
    expect((await f.attempt("ingest", { deps: { ...f.deps, log } })).error?.message).toMatch(/^test: /);
    // split, or (fundamentals as published) the published financial tables linked
    const splits = () => f.messages.filter((m) => /^fundamentals (split|unchanged)/.test(m)).length;
    expect(splits()).toBe(1);
    const published = f.worker();
    await waitFor("a stock-metrics job done", () => f.completed.some((j) => j.startsWith("analytics.")));
    // The retry finds the split whole: it adds the financials jobs not done, and splits nothing again.
    expect(await f.step("ingest")).toBeNull();
    expect(splits()).toBe(1);
    await expectFullRun(dataDir, await published, full.late);
  }, 180_000);
});

/** The source with one old close changed by 1 %: the recorded bytes are no longer its files' beginning. */
function editedCopy(appended: string): string {
  const f = tmp("append-flow-edited-");
  cpSync(appended, f, { recursive: true });
  const text = readFileSync(join(f, "prices.csv"), "utf8").split("\n");
  const cells = text[5].split(",");
  cells[4] = (Number(cells[4]) * 1.01).toFixed(2);
  text[5] = cells.join(",");
  writeFileSync(join(f, "prices.csv"), text.join("\n"));
  return f;
}

/**
 * `history` without one ticker's row of a published day (`history`), and that row appended at its
 * end (`source`): taken for an append by the files' bytes, it is none (NotAnAppendError).
 */
function lateCopy(history: string): { history: string; source: string } {
  const source = tmp("append-flow-late-");
  cpSync(history, source, { recursive: true });
  const lines = readFileSync(join(history, "prices.csv"), "utf8").trimEnd().split("\n");
  const last = lines.at(-1)!.split(",");
  const day = lines.map((l) => l.split(",")).find((c) => c[6] === last[6] && c[0] < last[0] && c[0] > "2025-01-01")!;
  writeFileSync(join(source, "prices.csv"), `${lines.filter((l) => l !== day.join(",")).join("\n")}\n`);
  const base = tmp("append-flow-late-history-");
  cpSync(source, base, { recursive: true });
  appendFileSync(join(source, "prices.csv"), `${day.join(",")}\n`);
  return { history: base, source };
}
