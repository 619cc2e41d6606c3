// GraphQL webhook fields over the API's test server (test/api/helpers.ts) and a real embedded
// webhook store: the secret shown once, field errors for refused URLs and bad input, another
// user's webhook reading as none, scopes, the delivery log, and testWebhook against a local receiver.
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webhookPort } from "../../jobs/webhooks/port.ts";
import type { EmbeddedWebhookStore } from "../../pipeline/store/webhooks/embedded.ts";
import { KEYS } from "../api/fixture.ts";
import { gql } from "../api/graphql-helpers.ts";
import { startTestServer, type TestServer } from "../api/helpers.ts";
import { openStore, startReceiver, TEST_SETTINGS } from "./receiver.ts";

let s: TestServer;
let loose: TestServer;
let store: EmbeddedWebhookStore;
let rx: Awaited<ReturnType<typeof startReceiver>>;
// the strict server's resolver: one public name, one name resolving to the metadata address
const resolver = async (host: string) =>
  host === "hooks.example.com"
    ? [{ address: "93.184.215.14", family: 4 }]
    : host === "sneaky.example.com"
      ? [{ address: "169.254.169.254", family: 4 }]
      : [];

beforeAll(async () => {
  store = await openStore();
  rx = await startReceiver();
  s = await startTestServer({
    deps: { webhooks: webhookPort(store, { ...TEST_SETTINGS, allowHttp: false, allowPrivate: false }, resolver) },
  });
  loose = await startTestServer({ deps: { webhooks: webhookPort(store, TEST_SETTINGS) } });
});
afterAll(async () => {
  await s?.close();
  await loose?.close();
  await rx?.close();
});

const CREATE =
  "mutation($in: CreateWebhookInput!) { createWebhook(input: $in) { success errors { field messages } " +
  "secret webhook { id url eventTypes enabled filters { minTotalChange levels tradeValue } } } }";

describe("webhooks in GraphQL", () => {
  it("createWebhook shows the secret once; webhooks lists the caller's only, without it", async () => {
    const r = await gql(s, CREATE, {
      in: {
        url: "https://hooks.example.com/in",
        eventTypes: ["rating.changed"],
        filters: { minTotalChange: 0.5, levels: [4, 3] },
      },
    });
    const out = r.json.data.createWebhook;
    expect(out.success).toBe(true);
    expect(out.errors).toBeNull();
    expect(out.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(out.webhook).toMatchObject({
      url: "https://hooks.example.com/in",
      eventTypes: ["rating.changed"],
      enabled: true,
      filters: { minTotalChange: 0.5, levels: [3, 4], tradeValue: null },
    });
    const mine = await gql(s, "{ webhooks { id url } }");
    expect(mine.json.data.webhooks).toContainEqual({ id: out.webhook.id, url: "https://hooks.example.com/in" });
    const bobs = await gql(s, "{ webhooks { id } }", undefined, { key: KEYS.bob });
    expect(bobs.json.data.webhooks).toEqual([]);
    // no field gives the secret back
    expect(JSON.stringify((await gql(s, '{ __type(name: "Webhook") { fields { name } } }')).json)).not.toContain(
      "secret",
    );
  });

  it("refused URLs and bad input are field errors naming the field; nothing is written", async () => {
    const before = (await store.list("u1")).length;
    const cases: [object, string, RegExp][] = [
      [{ url: "http://hooks.example.com/", eventTypes: ["rating.changed"] }, "url", /https only/],
      [
        { url: "https://sneaky.example.com/", eventTypes: ["rating.changed"] },
        "url",
        /169\.254\.169\.254 \(linkLocal\)/,
      ],
      [{ url: "https://[::ffff:127.0.0.1]/", eventTypes: ["rating.changed"] }, "url", /loopback/],
      [{ url: "https://hooks.example.com/", eventTypes: ["rating.moved"] }, "eventTypes", /one or more of/],
      [
        { url: "https://hooks.example.com/", eventTypes: ["portfolio.rebalanced"], filters: { tradeValue: 0 } },
        "filters.tradeValue",
        /positive/,
      ],
    ];
    for (const [input, field, message] of cases) {
      const out = (await gql(s, CREATE, { in: input })).json.data.createWebhook;
      expect(out.success, JSON.stringify(input)).toBe(false);
      expect(out.errors[0].field).toBe(field);
      expect(out.errors[0].messages[0]).toMatch(message);
      expect(out.secret).toBeNull();
    }
    expect((await store.list("u1")).length).toBe(before);
  });

  it("another user's webhook is not found for every mutation; its deliveries read as none", async () => {
    const { webhook } = await store.create("u1", {
      url: "https://hooks.example.com/a",
      eventTypes: ["snapshot.published"],
    });
    for (const m of ["deleteWebhook", "rotateWebhookSecret", "testWebhook", "updateWebhook"]) {
      const cap = m[0].toUpperCase() + m.slice(1);
      const r = await gql(
        s,
        `mutation($in: ${cap}Input!) { ${m}(input: $in) { success errors { field messages } } }`,
        { in: { webhookId: webhook.id } },
        { key: KEYS.bob },
      );
      expect(r.json.data[m], m).toEqual({
        success: false,
        errors: [{ field: "webhookId", messages: [`no webhook ${webhook.id}`] }],
      });
    }
    const d = await gql(s, `{ webhookDeliveries(webhookId: "${webhook.id}") { eventId } }`, undefined, {
      key: KEYS.bob,
    });
    expect(d.json.data.webhookDeliveries).toEqual([]);
    expect(await store.get(webhook.id)).not.toBeNull();
  });

  it("needs webhooks:read to list and webhooks:write to change", async () => {
    const r = await gql(s, "{ webhooks { id } }", undefined, { key: KEYS.aliceRatingsOnly });
    expect(r.json.errors[0].extensions).toMatchObject({ code: "FORBIDDEN", missingScopes: ["webhooks:read"] });
    const w = await gql(
      s,
      CREATE,
      { in: { url: "https://hooks.example.com/", eventTypes: ["rating.changed"] } },
      {
        key: KEYS.aliceRatingsOnly,
      },
    );
    expect(w.json.errors[0].extensions).toMatchObject({ missingScopes: ["webhooks:write"] });
  });

  it("rotate gives a new secret; update re-enables; delete removes; the delivery log reads back", async () => {
    const { webhook, secret } = await store.create("u1", {
      url: "https://hooks.example.com/r",
      eventTypes: ["rating.changed"],
    });
    const rot = await gql(
      s,
      `mutation { rotateWebhookSecret(input: {webhookId: "${webhook.id}"}) { success secret } }`,
    );
    expect(rot.json.data.rotateWebhookSecret.secret).toMatch(/^whsec_/);
    expect(rot.json.data.rotateWebhookSecret.secret).not.toBe(secret);
    expect((await store.signing(webhook.id))?.secret).toBe(rot.json.data.rotateWebhookSecret.secret);
    await store.recordAttempts(
      [
        {
          webhookId: webhook.id,
          eventId: "evt_1",
          eventType: "rating.changed",
          attempt: 15,
          status: 503,
          error: "HTTP 503",
          latencyMs: 12.5,
          nextAttemptAt: null,
          state: "failed",
        },
      ],
      1,
    );
    const log = await gql(
      s,
      `{ webhookDeliveries(webhookId: "${webhook.id}") ` +
        "{ eventId attempts lastStatusCode latencyMs state nextAttemptAt } webhooks { id enabled disabledReason } }",
    );
    expect(log.json.data.webhookDeliveries).toEqual([
      { eventId: "evt_1", attempts: 15, lastStatusCode: 503, latencyMs: 12.5, state: "failed", nextAttemptAt: null },
    ]);
    expect(log.json.data.webhooks).toContainEqual({
      id: webhook.id,
      enabled: false,
      disabledReason: "1 deliveries in a row failed for good",
    });
    const up = await gql(
      s,
      `mutation { updateWebhook(input: {webhookId: "${webhook.id}", enabled: true}) ` +
        "{ success webhook { enabled disabledReason } } }",
    );
    expect(up.json.data.updateWebhook).toEqual({ success: true, webhook: { enabled: true, disabledReason: null } });
    const del = await gql(
      s,
      `mutation { deleteWebhook(input: {webhookId: "${webhook.id}"}) { success deletedWebhookId } }`,
    );
    expect(del.json.data.deleteWebhook).toEqual({ success: true, deletedWebhookId: webhook.id });
    expect(await store.get(webhook.id)).toBeNull();
  });

  it("testWebhook sends one signed webhook.test event and answers the receiver's status", async () => {
    const { webhook, secret } = await store.create("u1", { url: `${rx.url}/ok`, eventTypes: ["rating.changed"] });
    const r = await gql(
      loose,
      `mutation { testWebhook(input: {webhookId: "${webhook.id}"}) { success result { statusCode error latencyMs } } }`,
    );
    expect(r.json.data.testWebhook).toMatchObject({ success: true, result: { statusCode: 200, error: null } });
    const got = rx.got.at(-1)!;
    expect(new Webhook(secret).verify(got.body, got.headers as Record<string, string>)).toMatchObject({
      type: "webhook.test",
      data: { webhookId: webhook.id },
    });
  });
});
