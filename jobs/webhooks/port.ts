// The API's webhook port (api/graphql/mutations/webhook-port.ts) in a server process: the
// embedded store, the guard as the URL policy, and a test POST signed like every delivery.
import { randomBytes } from "node:crypto";
import type { WebhookPort } from "../../api/graphql/mutations/webhook-port.ts";
import type { WebhookStore } from "../../pipeline/store/webhooks/types.ts";
import { checkedTarget, type Resolver, systemResolver } from "./guard.ts";
import { postSigned } from "./http.ts";
import type { DeliverySettings } from "./settings.ts";
import { signedHeaders } from "./sign.ts";

export function webhookPort(store: WebhookStore, s: DeliverySettings, resolve: Resolver = systemResolver): WebhookPort {
  return {
    store,
    async refuse(url) {
      try {
        await checkedTarget(url, s, resolve);
        return null;
      } catch (e) {
        return (e as Error).message;
      }
    },
    async test(id) {
      const hook = await store.signing(id);
      if (!hook) return { status: null, error: "no such webhook", latencyMs: 0 };
      const msgId = `evt_test_${randomBytes(12).toString("hex")}`;
      const body = JSON.stringify({
        id: msgId,
        type: "webhook.test",
        timestamp: new Date().toISOString(),
        snapshot: null,
        data: { webhookId: id },
      });
      const r = await postSigned(hook.url, signedHeaders(hook.secret, msgId, body), body, s, resolve);
      return { status: r.status, error: r.error, latencyMs: r.latencyMs };
    },
  };
}
