// A real local receiver (node:http on 127.0.0.1) whose paths behave as the tests need, recording
// every request it gets, and a webhook store with hooks pointing at it.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { DeliveryJob } from "../../jobs/webhooks/attempt.ts";
import { DELIVERY_DEFAULTS, type DeliverySettings } from "../../jobs/webhooks/settings.ts";
import { EmbeddedWebhookStore } from "../../pipeline/store/webhooks/embedded.ts";
import { tmp } from "../events/fixture.ts";

export interface Received {
  path: string;
  headers: IncomingMessage["headers"];
  body: string;
  /** When its answer was sent (ms since the receiver started). */
  answeredAt: number;
}

/**
 * Paths: /ok → 200; /flaky/<key> → 500 twice per key, then 200; /dead → 500; /gone → 410;
 * /slow → 200 after 600 ms; /redirect → 302 to /ok (which must not be followed).
 */
export async function startReceiver(): Promise<{ url: string; got: Received[]; close(): Promise<void> }> {
  const got: Received[] = [];
  const flaky = new Map<string, number>();
  const t0 = Date.now();
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => {
      body += c;
    });
    req.on("end", () => {
      const path = req.url ?? "";
      const answer = (status: number, headers: Record<string, string> = {}) => {
        got.push({ path, headers: req.headers, body, answeredAt: Date.now() - t0 });
        res.writeHead(status, headers).end(status >= 400 ? "receiver says no" : "ok");
      };
      if (path === "/ok") answer(200);
      else if (path.startsWith("/flaky")) {
        const n = (flaky.get(path) ?? 0) + 1;
        flaky.set(path, n);
        answer(n <= 2 ? 500 : 200);
      } else if (path === "/gone") answer(410);
      else if (path === "/slow") setTimeout(() => answer(200), 600);
      else if (path === "/redirect") answer(302, { location: "/ok" });
      else answer(500);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    got,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** Short backoff so retries take milliseconds; a local http receiver allowed. */
export const TEST_SETTINGS: DeliverySettings = {
  ...DELIVERY_DEFAULTS,
  allowHttp: true,
  allowPrivate: true,
  timeoutMs: 3000,
  attempts: 3,
  backoffMs: 40,
  backoffCapMs: 200,
  disableAfter: 2,
  concurrency: 8,
  perWebhook: 2,
};

export const openStore = () => EmbeddedWebhookStore.open(join(tmp("webhooks-store-"), "webhooks.duckdb"));

export async function hookTo(store: EmbeddedWebhookStore, url: string, owner = "u1") {
  return store.create(owner, { url, eventTypes: ["rating.changed", "snapshot.published"] });
}

export const job = (webhookId: string, eventId: string, data: unknown = { n: eventId }): DeliveryJob => ({
  webhookId,
  eventId,
  eventType: "rating.changed",
  body: JSON.stringify({ id: eventId, type: "rating.changed", timestamp: "2024-03-01T02:00:00.000Z", data }),
});
