// What the GraphQL webhook fields need from the rest of the service: the store, the operator's
// URL policy (https only, no private address: jobs/webhooks/guard.ts) and one signed test POST
// (jobs/ implements both; api/ speaks no outbound HTTP itself).
import type { WebhookStore } from "../../../pipeline/store/webhooks/types.ts";

export interface WebhookTestResult {
  status: number | null;
  error: string | null;
  latencyMs: number;
}

export interface WebhookPort {
  store: WebhookStore;
  /** Why the URL is refused (scheme, an address class), or null. */
  refuse(url: string): Promise<string | null>;
  /** Sends a signed `webhook.test` event to the webhook now, once (no retry, not recorded). */
  test(webhookId: string): Promise<WebhookTestResult>;
}
