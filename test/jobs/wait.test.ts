// The enqueuing side never waits forever: no worker → a timeout naming the job and saying no worker
// is connected; no Redis → a clear failure within the timeout; a job that fails for good says why
// and that the published snapshot is unchanged.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Redis } from "ioredis";
import type { Worker } from "bullmq";
import { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { readManifest } from "../../pipeline/store/snapshots.ts";
import { dispatchRun, JobFailedError, JobTimeoutError } from "../../jobs/dispatch.ts";
import { pipelineQueue } from "../../jobs/queue.ts";
import { runPipeline } from "../../jobs/runner.ts";
import { startPipelineWorker } from "../../jobs/worker.ts";
import { gatherStatus } from "../../jobs/status.ts";
import { writeTinySource } from "../fixtures/tiny-source.ts";
import { freePort, silent } from "./jobs-fixture.ts";

const REDIS = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const prefixBase = `test-wait-${process.pid}-${Date.now()}`;
const workers: Worker[] = [];

afterAll(async () => {
  await Promise.all(workers.map((w) => w.close()));
  const r = new Redis(REDIS);
  const keys = await r.keys(`${prefixBase}-*`);
  if (keys.length) await r.del(...keys);
  await r.quit();
});

async function store() {
  const dataDir = mkdtempSync(join(tmpdir(), "wait-"));
  return { dataDir, catalog: await Catalog.open(join(dataDir, "catalog.duckdb")) };
}

describe("waiting on a queued job", () => {
  it("times out when no worker takes the job, saying so, and leaves the job queued", async () => {
    const { dataDir, catalog } = await store();
    const prefix = `${prefixBase}-noworker`;
    const notes: string[] = [];
    const t0 = Date.now();
    const err = await dispatchRun({ dataDir, sourceDir: writeTinySource(), catalog, log: silent, redisUrl: REDIS, prefix, timeoutMs: 2_000, note: (l) => notes.push(l) }).catch((e) => e);
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(err).toBeInstanceOf(JobTimeoutError);
    expect(err.message).toMatch(/^gave up waiting for job run\.[0-9a-f]{16}\.all after 2 s \(last seen waiting\)/);
    expect(notes.some((n) => /no pipeline worker is connected/.test(n))).toBe(true);
    const q = pipelineQueue(REDIS, prefix);
    expect(await q.getJobCounts("waiting")).toEqual({ waiting: 1 });
    await q.close();
    // status tells the same: one waiting, no worker, nothing running, nothing published yet
    const st = await gatherStatus(dataDir, REDIS, prefix);
    expect(st.snapshot).toBeNull();
    expect(st.queue).toMatchObject({ counts: { waiting: 1, active: 0, failed: 0 }, workers: 0, running: [], scheduler: null });
  });

  it("fails clearly within the timeout when Redis cannot be reached", async () => {
    const { dataDir, catalog } = await store();
    const t0 = Date.now();
    const err = await dispatchRun({ dataDir, sourceDir: writeTinySource(), catalog, log: silent, redisUrl: `redis://127.0.0.1:${await freePort()}`, timeoutMs: 2_000 }).catch((e) => e);
    expect(Date.now() - t0).toBeLessThan(10_000);
    expect(err).toBeInstanceOf(JobFailedError);
    expect(err.message).toBe("could not queue the job on Redis: no answer within 2 s");
  });

  it("a job that fails for good says why and leaves the published snapshot as it was", async () => {
    const { dataDir, catalog } = await store();
    const prefix = `${prefixBase}-fail`;
    workers.push(startPipelineWorker({ redisUrl: REDIS, dataDir, catalog, log: silent, prefix }));
    const good = await runPipeline({ dataDir, sourceDir: writeTinySource(), catalog, log: silent });
    const bad = writeTinySource((f) => ({ "ratings.csv": f["ratings.csv"].replace("2024-01-01,AAA,5.0000", "2024-01-01,AAA,11.0000") }));
    const err = await dispatchRun({ dataDir, sourceDir: bad, catalog, log: silent, redisUrl: REDIS, prefix, timeoutMs: 30_000 }).catch((e) => e);
    expect(err).toBeInstanceOf(JobFailedError);
    expect(err.message).toMatch(/failed for good after 1 attempt\(s\)/);
    expect(err.message).toMatch(/total_rating/);
    expect(err.message).toContain(`the published snapshot is unchanged (${good.meta.id})`);
    expect(readManifest(dataDir)!.snapshotId).toBe(good.meta.id);
  }, 60_000);
});
