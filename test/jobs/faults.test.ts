// Faults on the real thing: worker processes on a real Redis, the run queued as a flow (the
// default). A worker SIGKILLed mid-stage has its job taken over by another worker (stalled-job recovery)
// with a result identical to the in-process runner's; Redis restarted mid-run, with and without
// persistence, never leaves the enqueuing command waiting: it completes or fails with a clear message,
// and the worker survives.
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runPipeline } from "../../jobs/local/runner.ts";
import { dispatchRun } from "../../jobs/queue/dispatch.ts";
import { pipelineQueue } from "../../jobs/queue/queue.ts";
import { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { readManifest, snapshotDir } from "../../pipeline/store/snapshot/snapshots.ts";
import { noRedis } from "../redis.ts";
import {
  differingTables,
  freePort,
  mediumSource,
  OwnRedis,
  type Proc,
  silent,
  spawnTs,
  stagingFolders,
  startWorker,
  waitFor,
} from "./jobs-fixture.ts";

const REDIS = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const prefixBase = `test-faults-${process.pid}-${Date.now()}`;
const procs: Proc[] = [];
const redises: OwnRedis[] = [];
let source = "";
let reference = "";

beforeAll(async () => {
  source = await mediumSource();
  const dataDir = mkdtempSync(join(tmpdir(), "faults-ref-"));
  const catalog = await Catalog.open(join(dataDir, "catalog.duckdb"));
  const { meta } = await runPipeline({ dataDir, sourceDir: source, catalog, log: silent });
  reference = snapshotDir(dataDir, meta.id);
}, 120_000);

afterAll(async () => {
  for (const p of procs) if (p.child.exitCode === null) p.child.kill("SIGKILL");
  for (const r of redises) await r.stop();
  if (noRedis) return;
  const r = new Redis(REDIS);
  const keys = await r.keys(`${prefixBase}-*`);
  if (keys.length) await r.del(...keys);
  await r.quit();
});

const completed = (p: Proc) => p.out.filter((l) => l.startsWith("COMPLETED ")).map((l) => l.slice("COMPLETED ".length));

/** The run's staging folder exists: the worker is inside the pipeline. */
const midRun = (dataDir: string) => waitFor("a staging folder", () => stagingFolders(dataDir).length > 0, 60_000, 20);

describe.skipIf(noRedis)("worker killed mid-stage", () => {
  it("is retried by another worker, its result identical to the in-process run; leaves no staging behind", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "faults-kill-"));
    const env = { REDIS_URL: REDIS, DATA_DIR: dataDir, QUEUE_PREFIX: `${prefixBase}-kill` };
    const a = startWorker(env);
    procs.push(a);
    await a.ready;
    const catalog = await Catalog.open(join(dataDir, "catalog.duckdb"));
    // The default queued run: a flow, its first jobs ingest and the fundamentals split.
    const result = dispatchRun({
      dataDir,
      sourceDir: source,
      catalog,
      log: silent,
      redisUrl: REDIS,
      prefix: env.QUEUE_PREFIX,
      timeoutMs: 120_000,
    });
    const queue = pipelineQueue(REDIS, env.QUEUE_PREFIX);
    let victim = "";
    try {
      // Inside a stage: the run's staging folder exists and a job of it is active.
      await midRun(dataDir);
      victim = await waitFor("a job running", async () => (await queue.getActive())[0]?.id, 60_000, 5);
      a.child.kill("SIGKILL");
      await a.exited;
    } finally {
      await queue.close();
    }
    expect(victim).toMatch(/^(ingest|fundamentals|financials|analytics|backtest)\./);
    expect(completed(a)).not.toContain(victim);
    const b = startWorker(env);
    procs.push(b);
    const r = await result;
    // The killed job was taken over (stalled-job recovery) and completed by worker B.
    expect(completed(b)).toContain(victim);
    expect(readManifest(dataDir)!.snapshotId).toBe(r.snapshotId);
    expect(await differingTables(reference, snapshotDir(dataDir, r.snapshotId))).toEqual([]);
    // The run's staging folder was published; nothing else is left.
    expect(stagingFolders(dataDir)).toEqual([]);
    b.child.kill("SIGTERM");
  }, 180_000);
});

for (const persist of [false, true]) {
  describe(`Redis restarted mid-run ${persist ? "with" : "without"} persistence`, () => {
    it("the run command exits with the run published or a clear failure, and the worker lives on", async () => {
      const redis = new OwnRedis(await freePort(), persist);
      redises.push(redis);
      await redis.start();
      const dataDir = mkdtempSync(join(tmpdir(), "faults-redis-"));
      const env = { REDIS_URL: redis.url, DATA_DIR: dataDir, QUEUE_PREFIX: "restart" };
      const w = startWorker(env);
      procs.push(w);
      await w.ready;
      const cli = spawnTs("jobs/cli/pipeline.ts", ["run", "--source", source, "--timeout", "90"], env);
      procs.push(cli);
      await midRun(dataDir);
      await redis.stop();
      await redis.start();
      const code = await Promise.race([
        cli.exited,
        new Promise<"hung">((res) => setTimeout(() => res("hung"), 100_000)),
      ]);
      const said = [...cli.out, ...cli.err].join("\n");
      expect(code, said).not.toBe("hung");
      if (code === 0) {
        const id = /published snapshot (\S+)/.exec(said)?.[1];
        expect(readManifest(dataDir)?.snapshotId).toBe(id);
        // The run went through the flow (the default queued run): its parent published it.
        expect(readManifest(dataDir)!.log![0].job).toMatch(/^publish\.s[0-9a-f]{15}\.all$/);
        expect(await differingTables(reference, snapshotDir(dataDir, id!))).toEqual([]);
      } else {
        expect(code).toBe(2);
        expect(said).toMatch(/vanished from Redis|failed for good/);
        expect(readManifest(dataDir)).toBeNull();
      }
      // No leftovers, and the worker is still there to take the next job.
      await waitFor("no staging left", () => stagingFolders(dataDir).length === 0, 10_000);
      expect(w.child.exitCode).toBeNull();
      const again = spawnTs("jobs/cli/pipeline.ts", ["run", "--source", source, "--timeout", "90", "--force"], env);
      procs.push(again);
      expect(await again.exited, [...again.out, ...again.err].join("\n")).toBe(0);
      expect(readdirSync(join(dataDir, "snapshots")).length).toBeGreaterThan(0);
      w.child.kill("SIGTERM");
    }, 240_000);
  });
}
