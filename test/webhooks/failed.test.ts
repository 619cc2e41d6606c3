// portfolio.failed: a user portfolio's rebalance failed for good (noteRebalanceFailure, the one
// place every executor records it) reaches the owner's webhooks subscribed to it, signed, once —
// noted twice (a retried job) it is one event id and one delivery — and nobody else's.
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, expect, it } from "vitest";
import { noteRebalanceFailure, type RebalanceDeps } from "../../jobs/queue/rebalance-requests.ts";
import { deliveryDeps } from "../../jobs/webhooks/deps.ts";
import { eventSink } from "../../jobs/webhooks/event-sink.ts";
import { LocalDeliveryQueue } from "../../jobs/webhooks/local-queue.ts";
import { tmp } from "../events/fixture.ts";
import { openStore, startReceiver, TEST_SETTINGS } from "./receiver.ts";

let rx: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  rx = await startReceiver();
});
afterAll(() => rx.close());

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined, debug: () => undefined };

it("a rebalance failed for good: portfolio.failed to its owner's subscribed webhooks only, once", async () => {
  const dataDir = tmp("failed-events-");
  writeFileSync(
    join(dataDir, "manifest.json"),
    JSON.stringify({
      snapshotId: "snap-1",
      sourceId: "s",
      publishedAt: "2024-03-01T02:00:00.000Z",
      history: ["snap-1"],
      version: 1,
      log: [],
    }),
  );
  const store = await openStore();
  const alice = await store.create("alice", { url: `${rx.url}/ok`, eventTypes: ["portfolio.failed"] });
  await store.create("alice", { url: `${rx.url}/ok`, eventTypes: ["portfolio.rebalanced", "rating.changed"] });
  await store.create("bob", { url: `${rx.url}/ok`, eventTypes: ["portfolio.failed", "portfolio.rebalanced"] });
  const deps = deliveryDeps(store, TEST_SETTINGS);
  const q = await LocalDeliveryQueue.open(join(dataDir, "queue.jsonl"), deps);
  const owners: Record<string, string> = { p1: "alice" };
  const sink = eventSink({
    dataDir,
    store,
    watchedBy: async () => [],
    ownerOf: (id) => owners[id] ?? null,
    enqueue: (j) => q.add(j),
  });
  const recorded: unknown[][] = [];
  const rebalance = {
    dataDir,
    log: silent,
    events: sink,
    catalog: { recordRebalanceFailure: async (...a: unknown[]) => void recorded.push(a) },
  } as unknown as RebalanceDeps;
  const requestedAt = "2024-03-01T10:00:00.000Z";
  const err = new Error("backtest: no prices for ZZZ after 2024-02-01\n    at rebalanceOne (rebalance.ts:1:1)");
  await noteRebalanceFailure(rebalance, "p1", requestedAt, err);
  await noteRebalanceFailure(rebalance, "p1", requestedAt, err); // the same failure noted again
  await noteRebalanceFailure(rebalance, "gone", null, err); // a portfolio deleted meanwhile: no owner
  await q.idle();
  await q.close();
  await deps.recorder.flush();

  expect(recorded).toHaveLength(3); // the catalog's record is kept as before
  expect(rx.got).toHaveLength(1);
  const [g] = rx.got;
  const event = new Webhook(alice.secret).verify(g.body, g.headers as Record<string, string>) as Record<
    string,
    unknown
  >;
  // the id recipe of docs/api/webhooks.md, computed here on its own
  const id = `evt_${createHash("sha256").update(`portfolio.failed|p1|${requestedAt}`).digest("hex").slice(0, 32)}`;
  expect(event).toMatchObject({
    id,
    type: "portfolio.failed",
    snapshot: "snap-1",
    data: { portfolioId: "p1", requestedAt, reason: "backtest: no prices for ZZZ after 2024-02-01" },
  });
  const data = event.data as { failedAt: string };
  expect(event.timestamp).toBe(data.failedAt);
  expect(Math.abs(Date.parse(data.failedAt) - Date.now())).toBeLessThan(60_000);
  expect((await store.deliveries(alice.webhook.id)).map((d) => [d.eventType, d.state])).toEqual([
    ["portfolio.failed", "delivered"],
  ]);
});
