// The enqueuing side never waits forever: no worker → a timeout naming the job and saying no worker
// is connected; no Redis → a clear failure within the timeout; a job that fails for good says why
// and that the published snapshot is unchanged; a job that completes is read at once, not at the
// next poll.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker as BullWorker, type Job, type Worker } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { gatherStatus } from "../../jobs/cli/status.ts";
import { runPipeline } from "../../jobs/local/runner.ts";
import { awaitJob } from "../../jobs/queue/await-job.ts";
import { dispatchRun, JobFailedError, JobLostError, JobTimeoutError } from "../../jobs/queue/dispatch.ts";
import { pipelineQueue, redisConnection } from "../../jobs/queue/queue.ts";
import { startPipelineWorker } from "../../jobs/worker/worker.ts";
import { hashedBytes, sourceStamp } from "../../pipeline/sources/fingerprint.ts";
import { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { readManifest } from "../../pipeline/store/snapshot/snapshots.ts";
import { writeTinySource } from "../fixtures/tiny-source.ts";
import { noRedis } from "../redis.ts";
import { cleanUpQueues, freePort, silent } from "./jobs-fixture.ts";

const REDIS = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const prefixBase = `test-wait-${process.pid}-${Date.now()}`;
const workers: Worker[] = [];

afterAll(() => cleanUpQueues(prefixBase, workers));

async function store() {
  const dataDir = mkdtempSync(join(tmpdir(), "wait-"));
  return { dataDir, catalog: await Catalog.open(join(dataDir, "catalog.duckdb")) };
}

describe.skipIf(noRedis)("waiting on a queued job", () => {
  it("times out when no worker takes the job, saying so, and leaves the job queued", async () => {
    const { dataDir, catalog } = await store();
    const prefix = `${prefixBase}-noworker`;
    const notes: string[] = [];
    const sourceDir = writeTinySource();
    const hashed = hashedBytes();
    const t0 = Date.now();
    const err = await dispatchRun({
      dataDir,
      sourceDir,
      catalog,
      log: silent,
      redisUrl: REDIS,
      prefix,
      timeoutMs: 2_000,
      note: (l) => notes.push(l),
    }).catch((e) => e);
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(err).toBeInstanceOf(JobTimeoutError);
    // The run is a flow: its parent (publish) waits for its first children, ingest and the fundamentals split.
    // Its jobs are named by the source's stamp: the command read none of the source's bytes.
    expect(err.message).toMatch(
      new RegExp(
        `^gave up waiting for job publish\\.${sourceStamp(sourceDir)}\\.all after 2 s \\(last seen waiting-children\\)`,
      ),
    );
    expect(hashedBytes()).toBe(hashed);
    expect(notes.some((n) => /no pipeline worker is connected/.test(n))).toBe(true);
    const q = pipelineQueue(REDIS, prefix);
    expect(await q.getJobCounts("waiting", "waiting-children")).toEqual({ waiting: 2, "waiting-children": 1 });
    expect((await q.getWaiting()).map((j) => j.name).sort()).toEqual(["fundamentals", "ingest"]);
    await q.close();
    // status tells the same: two waiting, no worker, nothing running, nothing published yet
    const st = await gatherStatus(dataDir, REDIS, prefix);
    expect(st.snapshot).toBeNull();
    expect(st.queue).toMatchObject({
      counts: { waiting: 2, active: 0, failed: 0 },
      workers: 0,
      running: [],
      scheduler: null,
    });
  });

  it("a job lost from Redis before any worker took it is enqueued again once, then reported lost", async () => {
    const { dataDir, catalog } = await store();
    const prefix = `${prefixBase}-lost`;
    const q = pipelineQueue(REDIS, prefix);
    const notes: string[] = [];
    const src = writeTinySource();
    const pending = dispatchRun({
      dataDir,
      sourceDir: src,
      catalog,
      log: silent,
      redisUrl: REDIS,
      prefix,
      timeoutMs: 60_000,
      note: (l) => notes.push(l),
    });
    // Lose the run's flow as a Redis restart without persistence would: every key of the queue gone, twice.
    const redis = new Redis(REDIS);
    const lose = async () => {
      const until = Date.now() + 10_000;
      let parent: Job | undefined;
      while (Date.now() < until) {
        parent = (await q.getJobs(["waiting-children"]))[0];
        if (parent) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length) await redis.del(...keys);
      return parent!.id!;
    };
    const id = await lose();
    const again = await lose();
    expect(again).toBe(id);
    const err = await pending.catch((e) => e);
    expect(notes).toContain(
      `job ${id} vanished from Redis (restarted without persistence?) before any worker published it; enqueued again`,
    );
    expect(err).toBeInstanceOf(JobLostError);
    expect(err.message).toBe(
      `job ${id} vanished from Redis (restarted without persistence?) 1 time(s); nothing was published ` +
        `by it — run the command again`,
    );
    // Lost once and then taken by a worker: the run completes.
    const notes2: string[] = [];
    const second = dispatchRun({
      dataDir,
      sourceDir: src,
      catalog,
      log: silent,
      redisUrl: REDIS,
      prefix,
      timeoutMs: 60_000,
      note: (l) => notes2.push(l),
    });
    await lose();
    const until = Date.now() + 10_000;
    while (Date.now() < until && !notes2.some((n) => n.includes("enqueued again")))
      await new Promise((r) => setTimeout(r, 50));
    workers.push(startPipelineWorker({ redisUrl: REDIS, dataDir, catalog, log: silent, prefix }));
    const r = await second;
    expect(readManifest(dataDir)!.snapshotId).toBe(r.snapshotId);
    expect(readManifest(dataDir)!.log![0].job).toBe(id);
    await q.close();
    await redis.quit();
  }, 60_000);

  it("fails clearly within the timeout when Redis cannot be reached", async () => {
    const { dataDir, catalog } = await store();
    const t0 = Date.now();
    const err = await dispatchRun({
      dataDir,
      sourceDir: writeTinySource(),
      catalog,
      log: silent,
      redisUrl: `redis://127.0.0.1:${await freePort()}`,
      timeoutMs: 2_000,
    }).catch((e) => e);
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(err).toBeInstanceOf(JobFailedError);
    expect(err.message).toBe("could not queue the job on Redis: no answer within 2 s");
  });

  it("a job that fails for good says why and leaves the published snapshot as it was", async () => {
    const { dataDir, catalog } = await store();
    const prefix = `${prefixBase}-fail`;
    workers.push(startPipelineWorker({ redisUrl: REDIS, dataDir, catalog, log: silent, prefix }));
    const good = await runPipeline({ dataDir, sourceDir: writeTinySource(), catalog, log: silent });
    const bad = writeTinySource((f) => ({
      "ratings.csv": f["ratings.csv"].replace("2024-01-01,AAA,5.0000", "2024-01-01,AAA,11.0000"),
    }));
    const err = await dispatchRun({
      dataDir,
      sourceDir: bad,
      catalog,
      log: silent,
      redisUrl: REDIS,
      prefix,
      timeoutMs: 30_000,
    }).catch((e) => e);
    expect(err).toBeInstanceOf(JobFailedError);
    // The flow's ingest child rejected the source at once (not retried); the parent names it.
    expect(err.message).toMatch(
      new RegExp(
        String.raw`^job publish\.s[0-9a-f]{15}\.all failed for good: ` +
          String.raw`its child job ingest\.s[0-9a-f]{15}\.all failed after 1 attempt\(s\): source rejected: 1 problem`,
      ),
    );
    expect(err.message).toMatch(/total_rating/);
    expect(err.message).toContain(`the published snapshot is unchanged (${good.meta.id})`);
    expect(readManifest(dataDir)!.snapshotId).toBe(good.meta.id);
  }, 60_000);

  it("returns as soon as the job completes, not at the poll after it (the queue's event wakes the wait)", async () => {
    const prefix = `${prefixBase}-woken`;
    const q = pipelineQueue(REDIS, prefix);
    const worker = new BullWorker(
      q.name,
      async () => {
        await new Promise((r) => setTimeout(r, 300));
        return { snapshotId: "s-1", totalMs: 300 };
      },
      { connection: redisConnection(REDIS), prefix },
    );
    workers.push(worker);
    const job = await q.add("run", {}, { jobId: "woken-1" });
    const t0 = Date.now();
    // One poll a minute: only the completion event can end this wait within seconds.
    const result = await awaitJob(
      q,
      { job, joined: false, sinceVersion: 0 },
      {
        dataDir: mkdtempSync(join(tmpdir(), "wait-")),
        kind: "run",
        timeoutMs: 120_000,
        pollMs: 60_000,
        reenqueue: () => q.add("run", {}, { jobId: "woken-1" }),
      },
    );
    expect(result).toEqual({ snapshotId: "s-1", totalMs: 300 });
    expect(Date.now() - t0).toBeLessThan(20_000);
    await q.close();
  }, 90_000);
});
