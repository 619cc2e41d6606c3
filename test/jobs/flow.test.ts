// A run as a flow of partition jobs (issue #12 item 1) on the real Redis: two worker processes
// share one run and publish a snapshot identical, table by table, to the in-process runner's; a
// worker SIGKILLed in the middle of a partition job has that partition retried by another worker,
// with the same result; the same run enqueued twice is one flow. With index benchmarks only, the
// stock metric jobs are added before ingest ends; children whose output is whole are not re-added.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dispatchRun } from "../../jobs/queue/dispatch.ts";
import {
  AFFINITY_MS,
  addFlowChildren,
  addRunFlow,
  affinityWindowMs,
  newFlowRun,
  RANGE_PRIORITY,
  runFlowIds,
} from "../../jobs/queue/flow.ts";
import { pipelineQueue } from "../../jobs/queue/queue.ts";
import { leaveBacktest } from "../../jobs/worker/flow-worker.ts";
import { sourceFingerprint, sourceStamp } from "../../pipeline/sources/fingerprint.ts";
import { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { readManifest, readMeta, snapshotDir } from "../../pipeline/store/snapshot/snapshots.ts";
import { noRedis } from "../redis.ts";
import {
  cleanUpQueues,
  differingTables,
  inProcessSnapshot,
  mediumSource,
  type Proc,
  silent,
  stagingFolders,
  startWorker,
  waitFor,
} from "./jobs-fixture.ts";

const REDIS = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const prefixBase = `test-flow-${process.pid}-${Date.now()}`;
const procs: Proc[] = [];
let source = "";
let reference = "";
// Small partitions: the 60 companies make 6 stock-metric jobs besides the backtests.
const PARTITION = { TICKERS_PER_PARTITION: "10" };

beforeAll(async () => {
  source = await mediumSource();
  reference = await inProcessSnapshot(source);
}, 120_000);

afterAll(async () => {
  for (const p of procs) if (p.child.exitCode === null) p.child.kill("SIGKILL");
  await cleanUpQueues(prefixBase);
});

/** A fresh store and queue prefix with `n` worker processes ready on them. */
async function workersOn(name: string, n: number) {
  const dataDir = mkdtempSync(join(tmpdir(), `flow-${name}-`));
  const env = { REDIS_URL: REDIS, DATA_DIR: dataDir, QUEUE_PREFIX: `${prefixBase}-${name}`, ...PARTITION };
  const workers = Array.from({ length: n }, () => startWorker(env));
  procs.push(...workers);
  await Promise.all(workers.map((w) => w.ready));
  return { dataDir, env, workers, catalog: await Catalog.open(join(dataDir, "catalog.duckdb")) };
}

const completed = (p: Proc) => p.out.filter((l) => l.startsWith("COMPLETED ")).map((l) => l.slice("COMPLETED ".length));

describe.skipIf(noRedis)("a run as a flow", () => {
  it("is shared by two worker processes and publishes the in-process runner's snapshot", async () => {
    const {
      dataDir,
      env,
      workers: [a, b],
      catalog,
    } = await workersOn("two", 2);
    const progress: number[] = [];
    const r = await dispatchRun({
      dataDir,
      sourceDir: source,
      catalog,
      log: silent,
      redisUrl: REDIS,
      prefix: env.QUEUE_PREFIX,
      timeoutMs: 120_000,
      flow: true,
      progress: (_s, done) => progress.push(done),
    });
    expect(readManifest(dataDir)!.snapshotId).toBe(r.snapshotId);
    expect(await differingTables(reference, snapshotDir(dataDir, r.snapshotId))).toEqual([]);
    // The jobs are named by the source's stamp; the snapshot records the fingerprint of its bytes.
    const ids = runFlowIds(sourceStamp(source));
    expect(readMeta(dataDir, r.snapshotId).sourceId).toBe(sourceFingerprint(source));
    const all = [...completed(a), ...completed(b)];
    // One ingest, one fundamentals split, one publish (the parent, published under its id), 6 ticker
    // ranges for the stock metrics and 6 for the financials, one backtest per portfolio.
    expect(all.filter((j) => j === ids.ingest || j === ids.fundamentals || j === ids.parent).sort()).toEqual(
      [ids.ingest, ids.fundamentals, ids.parent].sort(),
    );
    expect(all.filter((j) => j.startsWith("analytics.")).sort()).toEqual(
      [0, 1, 2, 3, 4, 5].map((part) => ids.analytics({ part, from: null, to: null })),
    );
    expect(all.filter((j) => j.startsWith("financials.")).sort()).toEqual(
      [0, 1, 2, 3, 4, 5].map((part) => ids.financials(part)),
    );
    const backtests = all.filter((j) => j.startsWith("backtest."));
    expect(backtests.length).toBe(readMeta(dataDir, r.snapshotId).counts.portfolios);
    // Both processes took partition jobs of the one run.
    expect(completed(a).length).toBeGreaterThan(0);
    expect(completed(b).length).toBeGreaterThan(0);
    expect(readManifest(dataDir)!.log![0].job).toBe(ids.parent);
    expect(Math.max(...progress)).toBeGreaterThan(1);
    expect(stagingFolders(dataDir)).toEqual([]);
    a.child.kill("SIGTERM");
    b.child.kill("SIGTERM");
  }, 180_000);

  it("retries a partition whose worker was SIGKILLed mid-job on another worker, with an identical result", async () => {
    const {
      dataDir,
      env,
      workers: [a],
      catalog,
    } = await workersOn("kill", 1);
    const result = dispatchRun({
      dataDir,
      sourceDir: source,
      catalog,
      log: silent,
      redisUrl: REDIS,
      prefix: env.QUEUE_PREFIX,
      timeoutMs: 120_000,
      flow: true,
    });
    const queue = pipelineQueue(REDIS, env.QUEUE_PREFIX);
    let victim = "";
    try {
      victim = await waitFor(
        "a partition job running",
        async () =>
          (await queue.getActive()).find(
            (j) => j.name === "analytics" || j.name === "backtest" || j.name === "financials",
          )?.id,
        60_000,
        5,
      );
      a.child.kill("SIGKILL");
      await a.exited;
    } finally {
      await queue.close();
    }
    // Killed before it could finish that job (else the test proves nothing).
    expect(completed(a)).not.toContain(victim);
    // A worker started now (its start-up prune runs) finds the run's staging folder intact.
    const b = startWorker(env);
    procs.push(b);
    const r = await result;
    expect(completed(b)).toContain(victim);
    expect(await differingTables(reference, snapshotDir(dataDir, r.snapshotId))).toEqual([]);
    expect(stagingFolders(dataDir)).toEqual([]);
    b.child.kill("SIGTERM");
  }, 180_000);

  it("is what a scheduled run (a `run` job with no source version, as the scheduler adds it) becomes", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "flow-nightly-"));
    const env = { REDIS_URL: REDIS, DATA_DIR: dataDir, QUEUE_PREFIX: `${prefixBase}-nightly`, ...PARTITION };
    const w = startWorker(env);
    procs.push(w);
    await w.ready;
    const queue = pipelineQueue(REDIS, env.QUEUE_PREFIX);
    try {
      // The job the scheduler adds at each tick (jobs/queue/schedule.ts): name `run`, data { sourceDir }.
      await queue.add("run", { sourceDir: source }, { jobId: "run.nightly-tick.all" });
      const published = await waitFor("the flow's publish", () => readManifest(dataDir), 120_000, 200);
      const ids = runFlowIds(sourceStamp(source));
      expect(published.log![0].job).toBe(ids.parent);
      // the publish job logs its completion after the publish's last steps (the events step among them)
      await waitFor("the publish job's completion", () => completed(w).includes(ids.parent) || null, 30_000);
      expect(completed(w)).toEqual(
        expect.arrayContaining(["run.nightly-tick.all", ids.ingest, ids.fundamentals, ids.parent]),
      );
      expect(await differingTables(reference, snapshotDir(dataDir, published.snapshotId))).toEqual([]);
    } finally {
      await queue.close();
    }
    w.child.kill("SIGTERM");
  }, 180_000);

  it("is one flow when the same run is enqueued twice", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "flow-twice-"));
    const prefix = `${prefixBase}-twice`;
    const queue = pipelineQueue(REDIS, prefix);
    try {
      const data = { sourceDir: source, sourceVersion: sourceStamp(source) };
      const [p1, p2] = await Promise.all([addRunFlow(queue, data), addRunFlow(queue, data)]);
      await addRunFlow(queue, data);
      const ids = runFlowIds(data.sourceVersion);
      expect([p1.id, p2.id]).toEqual([ids.parent, ids.parent]);
      const counts = await queue.getJobCounts(
        "waiting-children",
        "waiting",
        "active",
        "completed",
        "failed",
        "delayed",
      );
      expect(counts).toEqual({ "waiting-children": 1, waiting: 2, active: 0, completed: 0, failed: 0, delayed: 0 });
      expect((await queue.getWaiting()).map((j) => j.id).sort()).toEqual([ids.fundamentals, ids.ingest].sort());
      // One flow: all three jobs carry the first add's run id (one staging folder).
      const runs = new Set([...(await queue.getWaiting()), (await queue.getJob(ids.parent))!].map((j) => j.data.run));
      expect(runs.size).toBe(1);
      // And through the dispatcher: two commands for one source share the flow and its one publish.
      const env = { REDIS_URL: REDIS, DATA_DIR: dataDir, QUEUE_PREFIX: prefix, ...PARTITION };
      const w = startWorker(env);
      procs.push(w);
      await w.ready;
      const catalog = await Catalog.open(join(dataDir, "catalog.duckdb"));
      const ask = () =>
        dispatchRun({
          dataDir,
          sourceDir: source,
          catalog,
          log: silent,
          redisUrl: REDIS,
          prefix,
          timeoutMs: 120_000,
          flow: true,
        });
      const [r1, r2] = await Promise.all([ask(), ask()]);
      expect(r1.snapshotId).toBe(r2.snapshotId);
      expect(readManifest(dataDir)!.version).toBe(1);
      // the worker's COMPLETED line can reach its stdout after the queue told the dispatchers
      await waitFor("the publish's COMPLETED line", () => completed(w).includes(ids.parent) || undefined, 10_000, 50);
      expect(completed(w).filter((j) => j === ids.parent)).toEqual([ids.parent]);
      w.child.kill("SIGTERM");
    } finally {
      await queue.close();
    }
  }, 180_000);
  it("adds stock metric jobs before ingest ends (index benchmarks); publishes the in-process snapshot", async () => {
    // The sample's source without its rule benchmark: the metrics need only prices and index series.
    const indexOnly = mkdtempSync(join(tmpdir(), "flow-index-src-"));
    cpSync(source, indexOnly, { recursive: true });
    const defs = JSON.parse(readFileSync(join(source, "portfolios.json"), "utf8")) as {
      benchmarks: { series?: string }[];
    };
    const kept = defs.benchmarks.filter((b) => b.series !== undefined);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(defs.benchmarks.length);
    writeFileSync(join(indexOnly, "portfolios.json"), JSON.stringify({ ...defs, benchmarks: kept }));
    const expected = await inProcessSnapshot(indexOnly);
    const {
      dataDir,
      env,
      workers: [a, b],
      catalog,
    } = await workersOn("index", 2);
    const r = await dispatchRun({
      dataDir,
      sourceDir: indexOnly,
      catalog,
      log: silent,
      redisUrl: REDIS,
      prefix: env.QUEUE_PREFIX,
      timeoutMs: 120_000,
      flow: true,
    });
    expect(await differingTables(expected, snapshotDir(dataDir, r.snapshotId))).toEqual([]);
    const ids = runFlowIds(sourceStamp(indexOnly));
    // job id → [created, finished] (ms), from both workers
    const times = new Map(
      [...a.out, ...b.out]
        .filter((l) => l.startsWith("TIMES "))
        .map((l) => {
          const [, id, created, finished] = l.split(" ");
          return [id, [Number(created), Number(finished)]] as const;
        }),
    );
    const analytics = [...times].filter(([id]) => id.startsWith("analytics."));
    expect(analytics.length).toBe(6);
    const backtests = [...times].filter(([id]) => id.startsWith("backtest."));
    expect(backtests.length).toBe(readMeta(dataDir, r.snapshotId).counts.portfolios);
    // The stock metric jobs were added while ingest still went on (company ids, plan, source
    // hash); the backtests, which read the companies with their ids, only at its end.
    const lastAnalyticsAdded = Math.max(...analytics.map(([, [created]]) => created));
    expect(lastAnalyticsAdded).toBeLessThan(Math.min(...backtests.map(([, [created]]) => created)));
    expect(lastAnalyticsAdded).toBeLessThan(times.get(ids.ingest)![1]);
    a.child.kill("SIGTERM");
    b.child.kill("SIGTERM");
  }, 180_000);

  it("re-adds only children whose output is not whole (a finished child was removed: its id reruns it)", async () => {
    const prefix = `${prefixBase}-readd`;
    const queue = pipelineQueue(REDIS, prefix);
    try {
      const data = { sourceDir: source, sourceVersion: "v-readd", run: newFlowRun() };
      const parent = await queue.add("publish", data, { jobId: "publish.v-readd.all" });
      const ranges = [0, 1, 2].map((part) => ({ part, from: null, to: null }));
      const whole = new Set(["analytics:1", "backtest:1001", "financials:0"]);
      const done = (name: string, i: { range?: { part: number }; portfolioId?: string; part?: number }) =>
        whole.has(`${name}:${i.range?.part ?? i.portfolioId ?? i.part}`);
      const added = await addFlowChildren(queue, { id: parent.id!, queueKey: queue.qualifiedName }, data, {
        partitions: {
          analytics: ranges.map((range) => ({ range })),
          backtest: ["1001", "1002"].map((portfolioId) => ({ portfolioId })),
          financials: [0, 1].map((part) => ({ part })),
        },
        done,
      });
      expect(added).toBe(4);
      const ids = runFlowIds("v-readd");
      // (the ticker-range jobs wait as prioritized)
      const children = (await queue.getJobs(["waiting", "prioritized"])).filter((j) => j.id !== parent.id);
      expect(children.map((j) => j.id).sort()).toEqual(
        [ids.analytics(ranges[0]), ids.analytics(ranges[2]), ids.backtest("1002"), ids.financials(1)].sort(),
      );
      // Each under the flow's parent.
      for (const j of children) expect(j.parentKey).toBe(`${queue.qualifiedName}:${parent.id}`);
    } finally {
      await queue.close();
    }
  });
  it("hands out a backtest before any ticker-range job, left a while to the worker holding its universe", async () => {
    const prefix = `${prefixBase}-order`;
    const queue = pipelineQueue(REDIS, prefix);
    const taken: string[] = [];
    let worker: Worker | undefined;
    try {
      const data = { sourceDir: source, sourceVersion: "v-order", run: newFlowRun() };
      // (delayed: no worker here takes the parent, which is a plain job in this test)
      const parent = await queue.add("publish", data, { jobId: "publish.v-order.all", delay: 600_000 });
      const none = () => false;
      const ranges = [0, 1, 2].map((part) => ({ part, from: null, to: null }));
      // The range jobs first (as ingest adds them), the backtests after them, naming the ingest worker.
      await addFlowChildren(queue, { id: parent.id!, queueKey: queue.qualifiedName }, data, {
        partitions: { analytics: ranges.map((range) => ({ range })), financials: [0, 1].map((part) => ({ part })) },
        done: none,
      });
      await addFlowChildren(queue, { id: parent.id!, queueKey: queue.qualifiedName }, data, {
        partitions: { backtest: ["1001", "1002"].map((portfolioId) => ({ portfolioId })) },
        affinity: "ingest-worker",
        affinityMs: 771,
        done: none,
      });
      const backtest = (await queue.getJob(runFlowIds("v-order").backtest("1001")))!;
      expect(backtest.data).toMatchObject({ affinity: "ingest-worker", affinityMs: 771 });
      expect((await queue.getJob(runFlowIds("v-order").analytics(ranges[0])))!.opts.priority).toBe(RANGE_PRIORITY);
      worker = new Worker(queue.name, async (job) => void taken.push(job.id!), {
        connection: queue.opts.connection,
        prefix,
        concurrency: 1,
      });
      await waitFor("every child taken", async () => (taken.length === 7 ? true : undefined), 30_000, 50);
      // BullMQ takes a job without a priority before any prioritized one, whatever was added first.
      expect(taken.slice(0, 2).every((id) => id.startsWith("backtest."))).toBe(true);
      expect(taken.slice(2, 7).every((id) => id.startsWith("analytics.") || id.startsWith("financials."))).toBe(true);
    } finally {
      await worker?.close();
      await queue.close();
    }
    // Another worker leaves the backtest to the one named, for a while from its creation; the
    // named worker, a worker holding the universe anyway, or any worker after that runs it.
    const here = { worker: "other", holdsUniverse: false, ageMs: 0 };
    expect(leaveBacktest({ affinity: "ingest-worker" }, here)).toBe(true);
    expect(leaveBacktest({ affinity: "ingest-worker" }, { ...here, ageMs: AFFINITY_MS + 1 })).toBe(false);
    expect(leaveBacktest({ affinity: "ingest-worker" }, { ...here, worker: "ingest-worker" })).toBe(false);
    expect(leaveBacktest({ affinity: "ingest-worker" }, { ...here, holdsUniverse: true })).toBe(false);
    expect(leaveBacktest({}, here)).toBe(false);
    // For its affinityMs when it has one: no longer than another worker would take to load the
    // universe (0.4 µs per company and price date: 500 × 3,855 = 1,927,500 → 771 ms, the sample;
    // 5,000 × 6,300 → 12.6 s, kept to AFFINITY_MS).
    expect(affinityWindowMs(500, 3_855)).toBe(771);
    expect(affinityWindowMs(5_000, 6_300)).toBe(AFFINITY_MS);
    expect(leaveBacktest({ affinity: "ingest-worker", affinityMs: 771 }, { ...here, ageMs: 771 })).toBe(true);
    expect(leaveBacktest({ affinity: "ingest-worker", affinityMs: 771 }, { ...here, ageMs: 772 })).toBe(false);
  });

  it("retries a publish that failed after its merge, and publishes the in-process snapshot once", async () => {
    const {
      dataDir,
      env,
      workers: [w],
      catalog,
    } = await workersOn("republish", 1);
    // The worker's new manifest is written to manifest.json.<pid>.tmp: a folder there makes its
    // first publish fail (EISDIR) after the merge step, as a full disk would.
    const pid = w.out.find((l) => l.startsWith("READY "))!.split(" ")[1];
    const blocker = join(dataDir, `manifest.json.${pid}.tmp`);
    mkdirSync(blocker);
    const result = dispatchRun({
      dataDir,
      sourceDir: source,
      catalog,
      log: silent,
      redisUrl: REDIS,
      prefix: env.QUEUE_PREFIX,
      timeoutMs: 120_000,
      flow: true,
    });
    const ids = runFlowIds(sourceStamp(source));
    await waitFor(
      "the publish's first attempt failing",
      () => w.err.some((l) => l.includes("pipeline job failed") && l.includes(ids.parent)),
      90_000,
      20,
    );
    expect(w.err.find((l) => l.includes("pipeline job failed") && l.includes(ids.parent))).toMatch(/EISDIR/);
    // Nothing published, and the staging folder is whole with the flow's files back in it.
    expect(existsSync(join(dataDir, "manifest.json"))).toBe(false);
    const [staging] = stagingFolders(dataDir);
    expect(readdirSync(join(dataDir, "snapshots", staging))).toContain(".flow");
    rmSync(blocker, { recursive: true });
    const r = await result;
    expect(await differingTables(reference, snapshotDir(dataDir, r.snapshotId))).toEqual([]);
    const manifest = readManifest(dataDir)!;
    expect(manifest.log!.map((e) => e.job)).toEqual([ids.parent]);
    expect(readdirSync(join(dataDir, "snapshots"))).toEqual([r.snapshotId]);
    w.child.kill("SIGTERM");
  }, 180_000);
});
