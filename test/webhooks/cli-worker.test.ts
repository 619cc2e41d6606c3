// `npm run pipeline -- worker` delivers webhooks: the real CLI worker process, a delivery job on
// the `webhooks` queue of its Redis prefix, a local receiver. The signature is verified with the
// webhook's secret, and the outcome is in the store the CLI opened (DATA_DIR/webhooks.duckdb).
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { addDeliveries, webhookQueue } from "../../jobs/webhooks/bull.ts";
import { webhookStorePath } from "../../jobs/webhooks/service.ts";
import { EmbeddedWebhookStore } from "../../pipeline/store/webhooks/embedded.ts";
import { cleanUpQueues, type Proc, spawnTs, TEST_REDIS, waitFor } from "../jobs/jobs-fixture.ts";
import { noRedis } from "../redis.ts";
import { job, startReceiver } from "./receiver.ts";

const prefixBase = `test-whcli-${process.pid}-${randomBytes(3).toString("hex")}`;
let rx: Awaited<ReturnType<typeof startReceiver>>;
let p: Proc | undefined;

beforeAll(async () => {
  rx = await startReceiver();
});
afterAll(async () => {
  if (p && p.child.exitCode === null) p.child.kill("SIGKILL");
  await cleanUpQueues(prefixBase);
  await rx?.close();
});

describe.skipIf(noRedis)("pipeline -- worker", () => {
  it("delivers the webhooks queue's jobs, signed, and records the outcome", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "whcli-"));
    const prefix = `${prefixBase}-q`;
    const store = await EmbeddedWebhookStore.open(webhookStorePath(dataDir));
    const { webhook, secret } = await store.create("u1", { url: `${rx.url}/ok`, eventTypes: ["rating.changed"] });
    p = spawnTs("jobs/cli/pipeline.ts", ["worker"], {
      REDIS_URL: TEST_REDIS,
      DATA_DIR: dataDir,
      QUEUE_PREFIX: prefix,
      WEBHOOK_ALLOW_HTTP: "1",
      WEBHOOK_ALLOW_PRIVATE: "1",
    });
    await waitFor("the worker", () => p!.out.some((l) => l.includes("waiting for jobs")), 60_000);
    const queue = webhookQueue(TEST_REDIS, prefix);
    try {
      await addDeliveries(queue, [job(webhook.id, "evt_cli")], 3);
      await waitFor("the delivery", () => rx.got.length > 0, 30_000);
    } finally {
      await queue.close();
    }
    const [g] = rx.got;
    expect(new Webhook(secret).verify(g.body, g.headers as Record<string, string>)).toMatchObject({ id: "evt_cli" });
    // the CLI flushes its outcomes when it stops
    p.child.kill("SIGTERM");
    expect(await p.exited).toBe(0);
    expect((await store.deliveries(webhook.id)).map((d) => [d.eventId, d.state])).toEqual([["evt_cli", "delivered"]]);
  }, 120_000);
});
