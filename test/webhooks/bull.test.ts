// Delivery as BullMQ jobs on the real Redis (TEST_REDIS_URL), a queue prefix of this test's own:
// the custom backoff retries a receiver that fails twice, and the same (event, webhook) added
// twice is one job and one delivery.
import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addDeliveries, webhookQueue, webhookWorker } from "../../jobs/webhooks/bull.ts";
import { deliveryDeps } from "../../jobs/webhooks/deps.ts";
import type { EmbeddedWebhookStore } from "../../pipeline/store/webhooks/embedded.ts";
import { noRedis, TEST_REDIS } from "../redis.ts";
import { hookTo, job, openStore, startReceiver, TEST_SETTINGS } from "./receiver.ts";

const prefix = `whtest-${randomBytes(4).toString("hex")}`;
let rx: Awaited<ReturnType<typeof startReceiver>>;
let store: EmbeddedWebhookStore;

describe.skipIf(noRedis)("delivery (BullMQ)", () => {
  const deps = () => deliveryDeps(store, TEST_SETTINGS);
  let d: ReturnType<typeof deliveryDeps>;
  let queue: ReturnType<typeof webhookQueue>;
  let worker: ReturnType<typeof webhookWorker>;

  beforeAll(async () => {
    rx = await startReceiver();
    store = await openStore();
    d = deps();
    queue = webhookQueue(TEST_REDIS, prefix);
    worker = webhookWorker(TEST_REDIS, d, prefix);
  });
  afterAll(async () => {
    await worker?.close();
    await queue?.obliterate({ force: true }).catch(() => undefined);
    await queue?.close();
    await rx?.close();
  });

  const until = async (ok: () => boolean | Promise<boolean>) => {
    for (const end = Date.now() + 20_000; !(await ok()); ) {
      if (Date.now() > end) throw new Error("timed out waiting");
      await new Promise((r) => setTimeout(r, 25));
    }
  };

  it("a receiver failing twice gets the event on the third attempt, signed", async () => {
    const { webhook, secret } = await hookTo(store, `${rx.url}/flaky/bull`);
    await addDeliveries(queue, [job(webhook.id, "evt_bull")], TEST_SETTINGS.attempts);
    await until(() => rx.got.filter((g) => g.path === "/flaky/bull").length === 3);
    const third = rx.got.filter((g) => g.path === "/flaky/bull")[2];
    expect(new Webhook(secret).verify(third.body, third.headers as Record<string, string>)).toMatchObject({
      id: "evt_bull",
    });
    await until(async () => (await queue.getJobState(`evt_bull-${webhook.id}`)) === "completed");
    await d.recorder.flush();
    expect((await store.deliveries(webhook.id))[0]).toMatchObject({ attempts: 3, lastStatus: 200, state: "delivered" });
  });

  it("the same event for the same webhook added twice is one job and one delivery", async () => {
    const { webhook } = await hookTo(store, `${rx.url}/ok`);
    const j = job(webhook.id, "evt_bull_dup");
    await addDeliveries(queue, [j, j], TEST_SETTINGS.attempts);
    await until(async () => (await queue.getJobState(`evt_bull_dup-${webhook.id}`)) === "completed");
    await addDeliveries(queue, [j], TEST_SETTINGS.attempts);
    await new Promise((r) => setTimeout(r, 300));
    expect(rx.got.filter((g) => JSON.parse(g.body).id === "evt_bull_dup")).toHaveLength(1);
  });
});
