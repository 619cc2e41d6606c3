// The events step end to end: two publishes in a store (hand-made snapshots, fixture.ts, under a
// manifest naming them), the step run after the second, deliveries through the in-process queue
// to a real local receiver, signatures verified. The step run again (a retried publish, a crash
// before the cursor was written) sends no duplicate.
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, expect, it } from "vitest";
import { deliveryDeps } from "../../jobs/webhooks/deps.ts";
import { LocalDeliveryQueue } from "../../jobs/webhooks/local-queue.ts";
import { emitPublishEvents, ensureCursor } from "../../jobs/webhooks/publish-events.ts";
import { catalogWatches } from "../../jobs/webhooks/service.ts";
import type { Watchlist } from "../../pipeline/store/catalog/types.ts";
import { tmp, writeSnapshot } from "../events/fixture.ts";
import { openStore, startReceiver, TEST_SETTINGS } from "./receiver.ts";

let rx: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  rx = await startReceiver();
});
afterAll(() => rx.close());

const manifest = (ids: string[]) => ({
  snapshotId: ids.at(-1),
  sourceId: "s",
  publishedAt: "2024-03-01T02:00:00.000Z",
  history: [...ids].reverse(),
  version: ids.length,
  log: ids.map((snapshotId, i) => ({ version: i + 1, snapshotId, kind: "run", publishedAt: "x" })).reverse(),
});

it("three watched stocks change: exactly those events reach exactly their owners, once", async () => {
  const dataDir = tmp("events-store-");
  const snaps = join(dataDir, "snapshots");
  const base = { holdings: [], owners: {}, tickers: ["AA", "BB", "CC", "DD", "EE"] };
  await writeSnapshot(snaps, {
    ...base,
    id: "2024-02-01",
    ratings: ["AA", "BB", "CC", "DD", "EE"].map((t) => [t, "2024-01-31", 3] as [string, string, number]),
  });
  await writeSnapshot(snaps, {
    ...base,
    id: "2024-03-01",
    ratings: [
      ["AA", "2024-02-29", 4],
      ["BB", "2024-02-29", 2],
      ["CC", "2024-02-29", 5],
      ["DD", "2024-02-29", 3],
      ["EE", "2024-02-29", 1], // changed, watched by nobody with a webhook
    ],
  });
  // the first publish is what the step finds at its start: no backlog
  writeFileSync(join(dataDir, "manifest.json"), JSON.stringify(manifest(["2024-02-01"])));
  const store = await openStore();
  const alice = await store.create("alice", { url: `${rx.url}/ok`, eventTypes: ["rating.changed"] });
  const bob = await store.create("bob", { url: `${rx.url}/ok`, eventTypes: ["rating.changed"] });
  const lists: Watchlist[] = [
    { id: "1", ownerId: "alice", tickers: ["AA", "BB", "DD"] },
    { id: "2", ownerId: "bob", tickers: ["CC"] },
    { id: "3", ownerId: "carol", tickers: ["AA", "EE"] },
  ].map((w) => ({ ...w, name: w.id, description: "", private: true, createdAt: "x" }));
  const watchedBy = catalogWatches({ watchlistsOf: (u) => lists.filter((w) => w.ownerId === u) });
  const deps = deliveryDeps(store, TEST_SETTINGS);
  const q = await LocalDeliveryQueue.open(join(dataDir, "queue.jsonl"), deps);
  const step = { store, watchedBy, enqueue: (j: Parameters<typeof q.add>[0]) => q.add(j) };

  expect(await emitPublishEvents(dataDir, step)).toBe(0);
  writeFileSync(join(dataDir, "manifest.json"), JSON.stringify(manifest(["2024-02-01", "2024-03-01"])));
  expect(await emitPublishEvents(dataDir, step)).toBe(3);
  // the step again, and again with its cursor lost: the same ids, nothing more is sent
  expect(await emitPublishEvents(dataDir, step)).toBe(0);
  rmSync(join(dataDir, "webhooks", "cursor.json"));
  writeFileSync(join(dataDir, "webhooks", "cursor.json"), JSON.stringify({ version: 1 }));
  expect(await emitPublishEvents(dataDir, step)).toBe(3);
  await q.idle();
  await q.close();
  await deps.recorder.flush(); // outcomes are written in batches; the service flushes them at close too

  const got = rx.got.map((g) => {
    // bob's watchlist is "2": his webhook's secret must verify it, alice's the others
    const secret = JSON.parse(g.body).data.watchlists[0] === "2" ? bob.secret : alice.secret;
    const body = new Webhook(secret).verify(g.body, g.headers as Record<string, string>) as {
      type: string;
      data: {
        ticker: string;
        watchlists: string[];
        previous: { totalRating: number };
        current: { totalRating: number };
      };
    };
    return [body.data.watchlists, body.data.ticker, body.data.previous.totalRating, body.data.current.totalRating];
  });
  expect(got.sort()).toEqual([
    [["1"], "AA", 3, 4],
    [["1"], "BB", 3, 2],
    [["2"], "CC", 3, 5],
  ]);
  expect(new Set(rx.got.map((g) => g.headers["webhook-id"])).size).toBe(3);
  expect((await store.deliveries(alice.webhook.id)).map((d) => d.state)).toEqual(["delivered", "delivered"]);
});

it("a publish made after a process opened its webhooks is handled by whichever step runs first", async () => {
  // A worker opens its webhooks (ensureCursor), publishes, and before its own step runs, another
  // process's step (no `firstVersion`) takes the lock: without the cursor started at the open, that
  // step would take the new publish for the backlog and skip it.
  const dataDir = tmp("events-cursor-");
  const snaps = join(dataDir, "snapshots");
  const base = { holdings: [], owners: {}, tickers: ["AA", "BB"] };
  await writeSnapshot(snaps, {
    ...base,
    id: "2024-02-01",
    ratings: [
      ["AA", "2024-01-31", 3],
      ["BB", "2024-01-31", 3],
    ],
  });
  await writeSnapshot(snaps, {
    ...base,
    id: "2024-03-01",
    ratings: [
      ["AA", "2024-02-29", 4],
      ["BB", "2024-02-29", 3],
    ],
  });
  writeFileSync(join(dataDir, "manifest.json"), JSON.stringify(manifest(["2024-02-01"])));
  await ensureCursor(dataDir);
  const store = await openStore();
  await store.create("dora", { url: `${rx.url}/ok`, eventTypes: ["rating.changed"] });
  const lists: Watchlist[] = [{ id: "9", ownerId: "dora", tickers: ["AA", "BB"] }].map((w) => ({
    ...w,
    name: w.id,
    description: "",
    private: true,
    createdAt: "x",
  }));
  const watchedBy = catalogWatches({ watchlistsOf: (u) => lists.filter((w) => w.ownerId === u) });
  const enqueued: unknown[] = [];
  const step = { store, watchedBy, enqueue: async (j: unknown[]) => void enqueued.push(...j) };
  writeFileSync(join(dataDir, "manifest.json"), JSON.stringify(manifest(["2024-02-01", "2024-03-01"])));
  expect(await emitPublishEvents(dataDir, step)).toBe(1); // AA 3 → 4, the one watched change
  expect(await emitPublishEvents(dataDir, step, { firstVersion: 2 })).toBe(0); // the worker's own step after it
  expect(enqueued).toHaveLength(1);
});
