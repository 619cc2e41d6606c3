// `npm start` on a published store, through a real process (issue 32): the banner with the URL and
// the demo key comes no later than the first 200 of /healthz, then a "serving" line; each start
// leaves one demo key (the previous start's answers 401); START_WORKER=0 keeps the process off the
// pipeline queue, the default makes it a worker.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pipelineQueue } from "../../jobs/queue/queue.ts";
import { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { readManifest } from "../../pipeline/store/snapshot/snapshots.ts";
import { writeTinySource } from "../fixtures/tiny-source.ts";
import { noRedis, TEST_REDIS } from "../redis.ts";
import { freePort, type Proc, runScript, spawnScript } from "./process.ts";

const started: Proc[] = [];
const prefix = `test-start-worker-${process.pid}-${Date.now()}`;
let dataDir = "";
let source = "";

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), "start-banner-"));
  source = writeTinySource();
  const r = runScript("jobs/cli/pipeline.ts", ["run", "--source", source], { DATA_DIR: dataDir });
  expect(r.code, r.stderr).toBe(0);
}, 60_000);

afterAll(async () => {
  for (const p of started) if (p.child.exitCode === null) p.child.kill("SIGKILL");
  if (noRedis) return;
  const r = new Redis(TEST_REDIS);
  const keys = await r.keys(`${prefix}*`);
  if (keys.length) await r.del(...keys);
  await r.quit();
});

async function start(env: Record<string, string>): Promise<{ p: Proc; base: string }> {
  const port = await freePort();
  const p = spawnScript("jobs/host/start.ts", [], {
    PORT: String(port),
    DATA_DIR: dataDir,
    SOURCE_DIR: source,
    LOG_LEVEL: "warn",
    WEB_CONCURRENCY: "1",
    ...env,
  });
  started.push(p);
  return { p, base: `http://127.0.0.1:${port}` };
}

async function stop(p: Proc): Promise<void> {
  p.child.kill("SIGTERM");
  expect((await p.exited(15_000)).code).toBe(0);
}

const keyLine = /demo API key \(every scope; shown once, never logged\): (\S+)/;

describe("the start banner", () => {
  it("is out no later than the first 200 of /healthz; a serving line follows; one demo key per start", async () => {
    const keys: string[] = [];
    for (let round = 0; round < 2; round++) {
      const { p, base } = await start({});
      // Poll /healthz from the spawn on; note when the banner's key line is first seen.
      let bannerAt = Number.POSITIVE_INFINITY;
      let healthyAt = Number.POSITIVE_INFINITY;
      for (const until = Date.now() + 90_000; healthyAt === Number.POSITIVE_INFINITY && Date.now() < until; ) {
        const seen = keyLine.test(p.output());
        const r = await fetch(`${base}/healthz`).catch(() => null);
        if (seen && bannerAt === Number.POSITIVE_INFINITY) bannerAt = Date.now();
        if (r?.status === 200) healthyAt = Date.now();
        await r?.arrayBuffer();
        if (!r) await new Promise((res) => setTimeout(res, 20));
      }
      if (bannerAt === Number.POSITIVE_INFINITY) await p.waitFor(keyLine, 5_000).then(() => (bannerAt = Date.now()));
      expect(healthyAt).toBeLessThan(Number.POSITIVE_INFINITY);
      // The output is read every 50 ms by waitFor and at each poll here: that is the margin.
      expect(bannerAt - healthyAt).toBeLessThanOrEqual(100);
      expect(p.output()).toContain(`REST API: ${base}/data/v1`);
      const snapshot = readManifest(dataDir)!.snapshotId;
      await p.waitFor(new RegExp(`serving ${base}/data/v1 \\(snapshot ${snapshot}\\)`), 30_000);
      keys.push(keyLine.exec(p.output())![1]);
      const rs = await fetch(`${base}/data/v1/stock_ratings?limit=2`, { headers: { api_key: keys[round] } });
      expect(rs.status).toBe(200);
      if (round === 1) {
        // the first start's key was revoked by the second
        const old = await fetch(`${base}/data/v1/stock_ratings?limit=2`, { headers: { api_key: keys[0] } });
        expect(old.status).toBe(401);
      }
      await stop(p);
    }
    expect(keys[0]).not.toBe(keys[1]);
    const catalog = await Catalog.open(join(dataDir, "catalog.duckdb"));
    expect(catalog.listKeys().filter((k) => !k.revokedAt)).toHaveLength(1);
  }, 240_000);
});

describe.skipIf(noRedis)("START_WORKER", () => {
  const workers = async () => {
    const q = pipelineQueue(TEST_REDIS, prefix);
    try {
      return (await q.getWorkers()).length;
    } finally {
      await q.close();
    }
  };

  it.each([
    ["0", 0],
    ["", 1],
  ] as const)(
    "START_WORKER=%j with REDIS_URL: %i queue worker(s) in the npm start process",
    async (value, want) => {
      const { p } = await start({ REDIS_URL: TEST_REDIS, QUEUE_PREFIX: prefix, START_WORKER: value });
      await p.waitFor(/serving http:\S+ \(snapshot /, 90_000);
      // A worker registers when it connects: give it time to, then count.
      let n = await workers();
      for (const until = Date.now() + 10_000; n !== want && Date.now() < until; ) {
        await new Promise((res) => setTimeout(res, 200));
        n = await workers();
      }
      if (want === 0) await new Promise((res) => setTimeout(res, 2_000)).then(async () => (n = await workers()));
      expect(n).toBe(want);
      await stop(p);
    },
    120_000,
  );
});
