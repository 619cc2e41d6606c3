// A publish retried after its worker was SIGKILLed sends no duplicate event (issue #29): real
// Redis, real worker processes (worker-entry.ts: the CLI worker with webhooks), a local receiver.
// Worker A runs a flow and publishes; its events step then waits on the step's lock, which this
// test holds, and A is killed there, its publish job still active. Meanwhile the step runs once
// from here (as `npm start`'s poller would) and its cursor is put back, as if that process died
// after enqueueing and before its cursor: the deliveries are queued once already. Worker B takes
// the stalled publish job over, runs the step again and delivers: each webhook gets the event
// once, with one id.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type Lockfile from "proper-lockfile";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addRunFlow, runFlowIds } from "../../jobs/queue/flow.ts";
import { pipelineQueue } from "../../jobs/queue/queue.ts";
import { addDeliveries, webhookQueue } from "../../jobs/webhooks/bull.ts";
import { emitPublishEvents, webhooksDir } from "../../jobs/webhooks/publish-events.ts";
import { webhookStorePath } from "../../jobs/webhooks/service.ts";
import { sourceStamp } from "../../pipeline/sources/fingerprint.ts";
import { locksDir } from "../../pipeline/store/coordination/publish-lock.ts";
import { readManifest } from "../../pipeline/store/snapshot/snapshots.ts";
import { EmbeddedWebhookStore } from "../../pipeline/store/webhooks/embedded.ts";
import { cleanUpQueues, mediumSource, type Proc, spawnTs, TEST_REDIS, waitFor } from "../jobs/jobs-fixture.ts";
import { noRedis } from "../redis.ts";
import { startReceiver } from "./receiver.ts";

const lockfile = createRequire(import.meta.url)("proper-lockfile") as typeof Lockfile;
const prefixBase = `test-whkill-${process.pid}-${Date.now()}`;
const procs: Proc[] = [];
let rx: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  rx = await startReceiver();
});
afterAll(async () => {
  for (const p of procs) if (p.child.exitCode === null) p.child.kill("SIGKILL");
  await cleanUpQueues(prefixBase);
  await rx?.close();
});

function worker(env: Record<string, string>) {
  const p = spawnTs("test/webhooks/worker-entry.ts", [], env);
  procs.push(p);
  return { ...p, ready: waitFor("worker ready", () => p.out.some((l) => l.startsWith("READY")), 60_000) };
}

describe.skipIf(noRedis)("a publish retried after a worker SIGKILL", () => {
  it("sends each webhook its events once, under one id", async () => {
    const source = await mediumSource();
    const dataDir = mkdtempSync(join(tmpdir(), "whkill-"));
    const prefix = `${prefixBase}-a`;
    const env = {
      REDIS_URL: TEST_REDIS,
      DATA_DIR: dataDir,
      QUEUE_PREFIX: prefix,
      WEBHOOK_ALLOW_HTTP: "1",
      WEBHOOK_ALLOW_PRIVATE: "1",
    };
    const store = await EmbeddedWebhookStore.open(webhookStorePath(dataDir));
    const hooks = [
      await store.create("alice", { url: `${rx.url}/ok`, eventTypes: ["snapshot.published"] }),
      await store.create("bob", { url: `${rx.url}/ok`, eventTypes: ["snapshot.published", "rating.changed"] }),
    ];
    // the test holds the events step: A's step waits on it after A's publish
    mkdirSync(locksDir(dataDir), { recursive: true });
    const lockOpts = { lockfilePath: join(locksDir(dataDir), "webhook-events.lock"), realpath: false, stale: 60_000 };
    const release = await lockfile.lock(dataDir, lockOpts);
    const a = worker(env);
    await a.ready;
    const queue = pipelineQueue(TEST_REDIS, prefix);
    const hooksQueue = webhookQueue(TEST_REDIS, prefix);
    try {
      await addRunFlow(queue, { sourceDir: source, sourceVersion: sourceStamp(source) });
      const parent = runFlowIds(sourceStamp(source)).parent;
      const manifest = await waitFor("the publish", () => readManifest(dataDir), 240_000, 100);
      expect(await queue.getJobState(parent)).toBe("active"); // published, its events step waiting
      a.child.kill("SIGKILL");
      await a.exited;
      await release();

      // the step from another process: deliveries queued, then its cursor lost
      const step = {
        store,
        watchedBy: async () => [],
        enqueue: (j: Parameters<typeof addDeliveries>[1]) => addDeliveries(hooksQueue, j, 3),
      };
      expect(await emitPublishEvents(dataDir, step, { firstVersion: manifest.version })).toBe(2);
      writeFileSync(join(webhooksDir(dataDir), "cursor.json"), JSON.stringify({ version: 0 }));
      expect(rx.got).toHaveLength(0); // nobody delivers yet

      const b = worker(env);
      const retried = () => b.out.includes(`COMPLETED ${parent}`);
      await waitFor("the publish job retried by B", retried, 120_000).catch(async (e) => {
        const why = (await queue.getJob(parent))?.failedReason ?? "";
        throw new Error(`${e.message}: ${await queue.getJobState(parent)} ${why}\n${b.err.slice(-20).join("\n")}`);
      });
      await waitFor("two deliveries", () => rx.got.length >= 2, 30_000);
      await new Promise((r) => setTimeout(r, 1500)); // a duplicate would arrive meanwhile
      b.child.kill("SIGTERM");
      await b.exited;
    } finally {
      await queue.close();
      await hooksQueue.close();
    }
    expect(rx.got).toHaveLength(2);
    const events = rx.got.map((g) => {
      const secret = hooks.find((h) => {
        try {
          new Webhook(h.secret).verify(g.body, g.headers as Record<string, string>);
          return true;
        } catch {
          return false;
        }
      });
      expect(secret).toBeDefined();
      return { hook: secret!.webhook.id, ...(JSON.parse(g.body) as { id: string; type: string; snapshot: string }) };
    });
    expect(new Set(events.map((e) => e.hook)).size).toBe(2);
    expect(new Set(events.map((e) => e.id)).size).toBe(1);
    const snapshot = readManifest(dataDir)!;
    expect(events.map((e) => [e.type, e.snapshot])).toEqual([
      ["snapshot.published", snapshot.snapshotId],
      ["snapshot.published", snapshot.snapshotId],
    ]);
    // B's step handled the publish: its cursor moved on
    expect(JSON.parse(readFileSync(join(webhooksDir(dataDir), "cursor.json"), "utf8")).version).toBe(snapshot.version);
  }, 420_000);
});
