// REST reads of webhooks over a real HTTP server (test/api/helpers.ts) and a real embedded store:
// GET /data/v1/webhooks and /data/v1/webhooks/:id/deliveries give the caller's own only, with the
// GraphQL queries' fields and values; scope webhooks:read; bad parameters a 400 naming them; the
// OpenAPI document lists both.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { webhookPort } from "../../jobs/webhooks/port.ts";
import type { EmbeddedWebhookStore } from "../../pipeline/store/webhooks/embedded.ts";
import { KEYS } from "../api/fixture.ts";
import { gql } from "../api/graphql-helpers.ts";
import { startTestServer, type TestServer } from "../api/helpers.ts";
import { openStore, TEST_SETTINGS } from "./receiver.ts";

let s: TestServer;
let none: TestServer;
let store: EmbeddedWebhookStore;
let mine: string;
let bobs: string;

beforeAll(async () => {
  store = await openStore();
  s = await startTestServer({ deps: { webhooks: webhookPort(store, TEST_SETTINGS) } });
  none = await startTestServer({ snapshot: "none" });
  mine = (
    await store.create("u1", {
      url: "https://hooks.example.com/a",
      eventTypes: ["rating.changed", "portfolio.failed"],
      filters: { minTotalChange: 0.5 },
    })
  ).webhook.id;
  await store.create("u1", { url: "https://hooks.example.com/b", eventTypes: ["snapshot.published"] });
  bobs = (await store.create("u2", { url: "https://bob.example.com/", eventTypes: ["rating.changed"] })).webhook.id;
  const at = new Date(Date.now() + 60_000).toISOString();
  const base = { webhookId: mine, eventType: "rating.changed", latencyMs: 12.5 };
  await store.recordAttempts(
    [
      { ...base, eventId: "evt_1", attempt: 1, status: 500, error: "HTTP 500", nextAttemptAt: at, state: "retrying" },
      { ...base, eventId: "evt_2", attempt: 1, status: 200, error: null, nextAttemptAt: null, state: "delivered" },
    ],
    3,
  );
});
afterAll(async () => {
  await s?.close();
  await none?.close();
});

describe("GET /data/v1/webhooks", () => {
  it("lists the caller's webhooks with the GraphQL query's fields and values, never the secret", async () => {
    const r = await s.api("webhooks");
    expect(r.status).toBe(200);
    expect(r.json.map((w: { url: string }) => w.url)).toEqual([
      "https://hooks.example.com/a",
      "https://hooks.example.com/b",
    ]);
    const fields = "id url description eventTypes enabled disabledReason consecutiveFailures createdAt updatedAt";
    const g = await gql(s, `{ webhooks { ${fields} filters { minTotalChange levels tradeValue allowFractional } } }`);
    const strip = (f: Record<string, unknown>) => Object.fromEntries(Object.entries(f).filter(([, v]) => v !== null));
    expect(r.json).toEqual(
      g.json.data.webhooks.map((w: { filters: Record<string, unknown> }) => ({ ...w, filters: strip(w.filters) })),
    );
    expect(r.text).not.toContain("whsec_");
    expect((await s.api("webhooks", { api_key: KEYS.bob })).json.map((w: { id: string }) => w.id)).toEqual([bobs]);
  });

  it("needs webhooks:read and a key", async () => {
    const r = await s.api("webhooks", { api_key: KEYS.aliceRatingsOnly });
    expect(r.status).toBe(403);
    expect(r.text).toContain("webhooks:read");
    expect((await s.get("/data/v1/webhooks")).status).toBe(401);
  });

  it("answers 503 on a server without webhooks", async () => {
    const r = await none.api("webhooks");
    expect(r.status).toBe(503);
    expect(r.json.error.message).toMatch(/webhooks are not enabled/);
  });
});

describe("GET /data/v1/webhooks/:id/deliveries", () => {
  it("gives the deliveries, newest first, as webhookDeliveries does", async () => {
    const r = await s.api(`webhooks/${mine}/deliveries`);
    expect(r.status).toBe(200);
    expect(r.json.map((d: { eventId: string }) => d.eventId).sort()).toEqual(["evt_1", "evt_2"]);
    const retrying = r.json.find((d: { eventId: string }) => d.eventId === "evt_1");
    expect(retrying).toMatchObject({ attempts: 1, lastStatusCode: 500, lastError: "HTTP 500", state: "retrying" });
    const fields = "eventId eventType attempts lastStatusCode lastError latencyMs nextAttemptAt state updatedAt";
    const g = await gql(s, `{ webhookDeliveries(webhookId: "${mine}") { ${fields} } }`);
    expect(r.json).toEqual(g.json.data.webhookDeliveries);
    expect((await s.api(`webhooks/${mine}/deliveries`, { limit: 1 })).json).toHaveLength(1);
  });

  it("another user's webhook and an unknown one are 404; a bad id or limit is a 400 naming it", async () => {
    expect((await s.api(`webhooks/${bobs}/deliveries`)).status).toBe(404);
    expect((await s.api("webhooks/wh_999999/deliveries")).status).toBe(404);
    const badId = await s.api("webhooks/nope/deliveries");
    expect(badId.status).toBe(400);
    expect(badId.json.error.details).toEqual([{ param: "id", message: "must be a webhook id (wh_ and digits)" }]);
    for (const limit of ["0", "201", "x"]) {
      const r = await s.api(`webhooks/${mine}/deliveries`, { limit });
      expect(r.status).toBe(400);
      expect(r.json.error.details[0].param).toBe("limit");
    }
  });
});

it("the OpenAPI document lists both, with the scope and the parameters", async () => {
  const doc = (await s.get("/data/v1/openapi.json")).json;
  const list = doc.paths["/data/v1/webhooks"].get;
  const deliveries = doc.paths["/data/v1/webhooks/{id}/deliveries"].get;
  expect(list["x-required-scopes"]).toEqual(["webhooks:read"]);
  expect(deliveries.parameters.map((p: { name: string }) => p.name)).toEqual(["id", "api_key", "limit"]);
});
