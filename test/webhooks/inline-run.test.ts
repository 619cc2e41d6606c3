// The in-process executor (`npm run pipeline -- run` / `npm start` without Redis: dispatchRun →
// runPipeline) runs the events step right after its publish: a snapshot.published webhook gets the
// new snapshot's event through the in-process delivery queue, signed, once; no cursor was kept
// before, and the publish is handled all the same.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, expect, it } from "vitest";
import { dispatchRun } from "../../jobs/queue/dispatch.ts";
import { deliveryDeps } from "../../jobs/webhooks/deps.ts";
import { eventSink } from "../../jobs/webhooks/event-sink.ts";
import { LocalDeliveryQueue } from "../../jobs/webhooks/local-queue.ts";
import { webhookStorePath } from "../../jobs/webhooks/service.ts";
import { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { readManifest } from "../../pipeline/store/snapshot/snapshots.ts";
import { EmbeddedWebhookStore } from "../../pipeline/store/webhooks/embedded.ts";
import { mediumSource, silent } from "../jobs/jobs-fixture.ts";
import { startReceiver, TEST_SETTINGS } from "./receiver.ts";

let rx: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  rx = await startReceiver();
});
afterAll(() => rx.close());

it("an in-process run sends snapshot.published for its publish, once", async () => {
  const source = await mediumSource();
  const dataDir = mkdtempSync(join(tmpdir(), "whinline-"));
  const catalog = await Catalog.open(join(dataDir, "catalog.duckdb"));
  const store = await EmbeddedWebhookStore.open(webhookStorePath(dataDir));
  const { secret } = await store.create("u1", { url: `${rx.url}/ok`, eventTypes: ["snapshot.published"] });
  const deps = deliveryDeps(store, TEST_SETTINGS);
  const q = await LocalDeliveryQueue.open(join(dataDir, "queue.jsonl"), deps);
  const events = eventSink({
    dataDir,
    store,
    watchedBy: async () => [],
    ownerOf: () => null,
    enqueue: (j) => q.add(j),
  });
  const r = await dispatchRun({ dataDir, sourceDir: source, catalog, log: silent, redisUrl: null, events });
  await q.idle();
  await q.close();
  await catalog.close();
  expect(rx.got).toHaveLength(1);
  const [g] = rx.got;
  const event = new Webhook(secret).verify(g.body, g.headers as Record<string, string>) as {
    type: string;
    snapshot: string;
    data: { snapshotId: string; previousSnapshotId: string | null };
  };
  expect(event).toMatchObject({ type: "snapshot.published", snapshot: r.snapshotId });
  expect(event.data).toMatchObject({ snapshotId: r.snapshotId, previousSnapshotId: null });
  expect(readManifest(dataDir)?.snapshotId).toBe(r.snapshotId);
}, 300_000);
