// `npm start` as an operator meets it (issue 13, items 4-6), each through a real process:
// a store serving another source is kept unless SOURCE_DIR says otherwise; an unreachable Redis
// gets one start-up line and no stack traces; SIGTERM exits 0 within seconds, with Redis reachable
// or not; a DATA_DIR that is not a writable folder stops the start with one line.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readManifest, readMeta } from "../../pipeline/store/snapshot/snapshots.ts";
import { writeTinySource } from "../fixtures/tiny-source.ts";
import { type Proc, runScript, spawnScript, startRedis } from "./process.ts";

const KEY = "test-demo-key-0123456789";
const started: Proc[] = [];
afterAll(() => {
  for (const p of started) if (p.child.exitCode === null) p.child.kill("SIGKILL");
});

function start(env: Record<string, string>): Proc {
  const p = spawnScript("jobs/host/start.ts", [], {
    PORT: "0",
    DEMO_API_KEY: KEY,
    LOG_LEVEL: "info",
    WEB_CONCURRENCY: "1",
    ...env,
  });
  started.push(p);
  return p;
}

const banner = /serving (http:\/\/127\.0\.0\.1:\d+)\/data\/v1/;

/** SIGTERM after a served request: exit code 0, within 5 s, and the port then refuses. */
async function expectCleanStop(p: Proc, base: string): Promise<void> {
  expect((await fetch(`${base}/data/v1/stock_ratings?limit=2&api_key=${KEY}`)).status).toBe(200);
  const t0 = Date.now();
  p.child.kill("SIGTERM");
  const { code, signal } = await p.exited(15_000);
  const ms = Date.now() - t0;
  expect({ code, signal }).toEqual({ code: 0, signal: null });
  expect(ms).toBeLessThan(5_000);
  expect(p.output()).toMatch(/shutting down/);
  await expect(fetch(`${base}/healthz`)).rejects.toThrow();
}

describe("npm start on a store that serves another source", () => {
  it("serves it without SOURCE_DIR and says how to switch; SOURCE_DIR still publishes its source", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "start-keep-"));
    const x = writeTinySource();
    expect(runScript("jobs/cli/pipeline.ts", ["run", "--source", x], { DATA_DIR: dataDir }).code).toBe(0);
    const published = readManifest(dataDir)!.snapshotId;

    const p = start({ DATA_DIR: dataDir });
    const base = (await p.waitFor(banner, 150_000))[1];
    // Still X's data: the start may add the demo user's portfolio (a rebalance on the same source).
    const served = readManifest(dataDir)!.snapshotId;
    expect(readMeta(dataDir, served).sourceDir).toBe(x);
    expect(readMeta(dataDir, served).sourceId).toBe(readMeta(dataDir, published).sourceId);
    expect((await (await fetch(`${base}/healthz`)).json()).snapshot).toBe(served);
    expect(p.output()).toContain(`serving the published snapshot of ${x}`);
    expect(p.output()).toContain("SOURCE_DIR=DIR npm start, or npm run pipeline -- run --source DIR");
    p.child.kill("SIGTERM");
    await p.exited();

    // Explicit SOURCE_DIR: today's behaviour, its source is published over the other one.
    const y = writeTinySource((f) => ({ "prices.csv": f["prices.csv"].replace(/,10\.00,/g, ",10.50,") }));
    const q = start({ DATA_DIR: dataDir, SOURCE_DIR: y });
    await q.waitFor(banner, 120_000);
    const now = readManifest(dataDir)!;
    expect(now.snapshotId).not.toBe(published);
    expect(readMeta(dataDir, now.snapshotId).sourceDir).toBe(y);
    q.child.kill("SIGTERM");
    await q.exited();
  }, 300_000);
});

describe("Redis at start and shutdown", () => {
  it("an unreachable REDIS_URL: one start-up line, no stack trace, publishes and serves; SIGTERM exits 0", async () => {
    const p = start({
      DATA_DIR: mkdtempSync(join(tmpdir(), "start-noredis-")),
      SOURCE_DIR: writeTinySource(),
      REDIS_URL: "redis://127.0.0.1:1",
    });
    const base = (await p.waitFor(banner, 120_000))[1];
    // Long enough for several reconnect attempts (ioredis retries within 2 s).
    await new Promise((r) => setTimeout(r, 4_000));
    const out = p.output();
    expect(out.split("\n").filter((l) => /unreachable/i.test(l))).toHaveLength(1);
    expect(out).toMatch(
      /Redis is unreachable.*ECONNREFUSED 127\.0\.0\.1:1|ECONNREFUSED 127\.0\.0\.1:1.*Redis is unreachable/,
    );
    expect(out).not.toMatch(/^\s+at /m);
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    await expectCleanStop(p, base);
  }, 180_000);

  it("a reachable Redis: the start-up run goes through the queue, SIGTERM closes it and exits 0", async () => {
    const redis = await startRedis();
    try {
      const p = start({
        DATA_DIR: mkdtempSync(join(tmpdir(), "start-redis-")),
        SOURCE_DIR: writeTinySource(),
        REDIS_URL: redis.url,
      });
      const base = (await p.waitFor(banner, 120_000))[1];
      expect(p.output()).not.toMatch(/unreachable/i);
      expect(p.output()).toMatch(/pipeline job completed/);
      await expectCleanStop(p, base);
    } finally {
      redis.stop();
    }
  }, 180_000);
});

describe("SOURCE_DIR must be a folder", () => {
  it("a missing one stops npm start with one line and exit code 64", () => {
    const r = runScript("jobs/host/start.ts", [], {
      DATA_DIR: mkdtempSync(join(tmpdir(), "start-nosrc-")),
      SOURCE_DIR: "/nonexistent/source",
      PORT: "0",
      DEMO_API_KEY: KEY,
    });
    expect(r.code).toBe(64);
    expect(r.stderr).toBe("SOURCE_DIR /nonexistent/source: no such folder\n");
  }, 60_000);
});

describe("DATA_DIR must be a writable folder", () => {
  const file = join(mkdtempSync(join(tmpdir(), "start-file-")), "not-a-folder");
  writeFileSync(file, "x");
  // Cases that fail for root too: a regular file, a folder under a file, and /proc (where Node's
  // recursive mkdir never returns).
  for (const [what, dir] of [
    ["a regular file", file],
    ["a path under a file", join(file, "store")],
    ["a path under /proc", "/proc/x"],
  ] as const) {
    it(`${what}: npm start and the CLI stop at once with one line`, () => {
      for (const [script, args] of [
        ["jobs/host/start.ts", []],
        ["jobs/cli/pipeline.ts", ["run"]],
      ] as const) {
        const r = runScript(script, [...args], { DATA_DIR: dir, PORT: "0", DEMO_API_KEY: KEY });
        expect(r.code, `${script}: ${r.stderr}`).toBe(73);
        expect(r.stderr.trim().split("\n")).toEqual([
          expect.stringMatching(new RegExp(`^DATA_DIR ${dir} is not a writable folder: .+`)),
        ]);
      }
    }, 60_000);
  }
});
