// Delivery through the in-process queue to a real local receiver: signatures checked with the
// standardwebhooks package's own verifier, retries, disabling, no duplicates, a slow receiver
// beside a fast one, and a restart that resumes from the journal file.
import { join } from "node:path";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deliveryDeps } from "../../jobs/webhooks/deps.ts";
import { LocalDeliveryQueue } from "../../jobs/webhooks/local-queue.ts";
import type { EmbeddedWebhookStore } from "../../pipeline/store/webhooks/embedded.ts";
import { tmp } from "../events/fixture.ts";
import { hookTo, job, openStore, startReceiver, TEST_SETTINGS } from "./receiver.ts";

let rx: Awaited<ReturnType<typeof startReceiver>>;
let store: EmbeddedWebhookStore;

beforeAll(async () => {
  rx = await startReceiver();
  store = await openStore();
});
afterAll(() => rx.close());

async function queue(settings = TEST_SETTINGS, file = join(tmp("webhooks-q-"), "queue.jsonl")) {
  const deps = deliveryDeps(store, settings);
  const q = await LocalDeliveryQueue.open(file, deps);
  return {
    q,
    file,
    /** Every job settled and every outcome written to the store. */
    async drained() {
      await q.idle();
      await deps.recorder.flush();
    },
    async close() {
      await q.close();
      await deps.recorder.flush();
    },
  };
}

const at = (path: string) => rx.got.filter((g) => g.path === path);

describe("delivery (in-process queue)", () => {
  it("signs per Standard Webhooks: the package's verifier accepts what the receiver got", async () => {
    const { webhook, secret } = await hookTo(store, `${rx.url}/ok`);
    const { q, drained, close } = await queue();
    await q.add([job(webhook.id, "evt_signed")]);
    await drained();
    const r = rx.got.find((g) => JSON.parse(g.body).id === "evt_signed")!;
    expect(r.headers["webhook-id"]).toBe("evt_signed");
    expect(r.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/=]{44}$/);
    const verified = new Webhook(secret).verify(r.body, r.headers as Record<string, string>);
    expect(verified).toMatchObject({ id: "evt_signed", type: "rating.changed" });
    // another secret does not verify it
    const other = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
    expect(() => new Webhook(other).verify(r.body, r.headers as Record<string, string>)).toThrow();
    const [d] = await store.deliveries(webhook.id);
    expect(d).toMatchObject({ eventId: "evt_signed", attempts: 1, lastStatus: 200, state: "delivered" });
    await close();
  });

  it("a receiver failing twice then answering 200 gets the event on the third attempt, same id each time", async () => {
    const { webhook } = await hookTo(store, `${rx.url}/flaky/a`);
    const { q, drained, close } = await queue();
    await q.add([job(webhook.id, "evt_flaky")]);
    await drained();
    const got = at("/flaky/a");
    expect(got).toHaveLength(3);
    expect(new Set(got.map((g) => g.headers["webhook-id"]))).toEqual(new Set(["evt_flaky"]));
    const [d] = await store.deliveries(webhook.id);
    expect(d).toMatchObject({ attempts: 3, lastStatus: 200, state: "delivered", nextAttemptAt: null });
    expect((await store.get(webhook.id))?.enabled).toBe(true);
    await close();
  });

  it("a dead receiver ends disabled with the reason; another webhook's deliveries are unaffected", async () => {
    const dead = (await hookTo(store, `${rx.url}/dead`)).webhook;
    const ok = (await hookTo(store, `${rx.url}/ok`, "u2")).webhook;
    const { q, drained, close } = await queue();
    const events = ["evt_d1", "evt_d2", "evt_d3"];
    await q.add(events.flatMap((e) => [job(dead.id, e), job(ok.id, e)]));
    await drained();
    const after = (await store.get(dead.id))!;
    expect(after.enabled).toBe(false);
    expect(after.disabledReason).toBe("2 deliveries in a row failed for good");
    // disableAfter 2: two deliveries failed after 3 attempts each; the third was cancelled (or failed if it
    // started before the second failure was recorded), never delivered
    const ds = await store.deliveries(dead.id);
    expect(ds.filter((d) => d.state === "failed").length).toBeGreaterThanOrEqual(2);
    expect(ds.some((d) => d.state === "delivered")).toBe(false);
    const okGot = rx.got.filter((g) => g.path === "/ok" && events.includes(JSON.parse(g.body).id));
    expect(okGot.map((g) => JSON.parse(g.body).id).sort()).toEqual(events);
    expect((await store.get(ok.id))?.enabled).toBe(true);
    await close();
  });

  it("410 Gone disables the webhook at once; a redirect is not followed (a failed attempt)", async () => {
    const gone = (await hookTo(store, `${rx.url}/gone`)).webhook;
    const moved = (await hookTo(store, `${rx.url}/redirect`)).webhook;
    const before = at("/ok").length;
    const { q, drained, close } = await queue();
    await q.add([job(gone.id, "evt_g"), job(moved.id, "evt_r")]);
    await drained();
    expect(at("/gone")).toHaveLength(1);
    expect(await store.get(gone.id)).toMatchObject({
      enabled: false,
      disabledReason: "the receiver answered 410 Gone",
    });
    expect(at("/redirect")).toHaveLength(3);
    expect(at("/ok").length).toBe(before);
    const [d] = await store.deliveries(moved.id);
    expect(d).toMatchObject({ attempts: 3, lastStatus: 302, state: "failed" });
    await close();
  });

  it("the same event id twice is one delivery, also after it settled and across a restart", async () => {
    const { webhook } = await hookTo(store, `${rx.url}/ok`);
    const dup = () => rx.got.filter((g) => JSON.parse(g.body).id === "evt_dup").length;
    const one = await queue();
    expect(await one.q.add([job(webhook.id, "evt_dup"), job(webhook.id, "evt_dup")])).toBe(1);
    await one.drained();
    expect(await one.q.add([job(webhook.id, "evt_dup")])).toBe(0);
    await one.close();
    const two = await queue(TEST_SETTINGS, one.file);
    expect(await two.q.add([job(webhook.id, "evt_dup")])).toBe(0);
    await two.close();
    expect(dup()).toBe(1);
  });

  it("a slow receiver holds at most perWebhook slots: the fast one's deliveries finish first", async () => {
    const slow = (await hookTo(store, `${rx.url}/slow`)).webhook;
    const fast = (await hookTo(store, `${rx.url}/ok`)).webhook;
    const { q, drained, close } = await queue({ ...TEST_SETTINGS, concurrency: 4, perWebhook: 2 });
    // the slow webhook's six jobs are queued first
    await q.add([...Array(6)].map((_, i) => job(slow.id, `evt_slow${i}`)));
    await q.add([...Array(6)].map((_, i) => job(fast.id, `evt_fast${i}`)));
    await drained();
    const mine = (p: string) => rx.got.filter((g) => JSON.parse(g.body).id.startsWith(p)).map((g) => g.answeredAt);
    const [s, f] = [mine("evt_slow"), mine("evt_fast")];
    expect(s).toHaveLength(6);
    expect(f).toHaveLength(6);
    // six slow answers two at a time take three rounds of 600 ms; the fast ones are all answered
    // before the second round of slow ones is
    expect(Math.max(...f)).toBeLessThan(s.sort((a, b) => a - b)[2]);
    await close();
  });

  it("a restart resumes: a delivery waiting for its retry is sent by the next queue on the same file", async () => {
    const { webhook } = await hookTo(store, `${rx.url}/flaky/restart`);
    const slowRetry = { ...TEST_SETTINGS, backoffMs: 400, backoffCapMs: 400 };
    const one = await queue(slowRetry);
    await one.q.add([job(webhook.id, "evt_resume")]);
    while (at("/flaky/restart").length < 1) await new Promise((r) => setTimeout(r, 10));
    await one.close(); // the retry is due in 200–400 ms: not run by this queue
    expect(at("/flaky/restart")).toHaveLength(1);
    const two = await queue(slowRetry, one.file);
    expect(two.q.size).toBe(1);
    await two.drained();
    expect(at("/flaky/restart")).toHaveLength(3);
    const [d] = await store.deliveries(webhook.id);
    expect(d).toMatchObject({ attempts: 3, state: "delivered" });
    await two.close();
  });
});
