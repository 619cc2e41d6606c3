// One attempt of one delivery, whichever queue runs it (BullMQ or the in-process one): sign with
// the webhook's current secret, POST through the guard, record the outcome, and say whether and
// when to try again. The queue only schedules.
import type { AttemptOutcome, SigningWebhook } from "../../pipeline/store/webhooks/types.ts";
import type { PostResult } from "./http.ts";
import { type DeliverySettings, retryDelay } from "./settings.ts";
import { signedHeaders } from "./sign.ts";

/** A delivery job's data: one event for one webhook, its body as it is signed and sent. */
export interface DeliveryJob {
  webhookId: string;
  eventId: string;
  eventType: string;
  body: string;
}

/** The one job id of a delivery: a publish computed again adds the same id, which the queue joins. */
export const deliveryJobId = (j: Pick<DeliveryJob, "eventId" | "webhookId">) => `${j.eventId}-${j.webhookId}`;

export interface AttemptDeps {
  settings: DeliverySettings;
  signing(id: string): Promise<SigningWebhook | null>;
  post(url: string, headers: Record<string, string>, body: string): Promise<PostResult>;
  record(o: AttemptOutcome): void;
  now?: () => Date;
}

/** `retryInMs`: try again after that long; otherwise the delivery is settled (delivered, failed or cancelled). */
export type AttemptResult = { state: AttemptOutcome["state"]; retryInMs?: number };

export async function attemptDelivery(job: DeliveryJob, attempt: number, d: AttemptDeps): Promise<AttemptResult> {
  const now = d.now ?? (() => new Date());
  const base = { webhookId: job.webhookId, eventId: job.eventId, eventType: job.eventType, attempt };
  const hook = await d.signing(job.webhookId);
  if (!hook?.enabled) {
    // deleted or disabled since the event was queued: nothing is sent
    if (hook)
      d.record({
        ...base,
        status: null,
        error: "webhook disabled",
        latencyMs: null,
        nextAttemptAt: null,
        state: "cancelled",
      });
    return { state: "cancelled" };
  }
  const r = await d.post(hook.url, signedHeaders(hook.secret, job.eventId, job.body, now()), job.body);
  const out = { ...base, status: r.status, error: r.error, latencyMs: r.latencyMs };
  if (r.status !== null && r.status >= 200 && r.status < 300) {
    d.record({ ...out, nextAttemptAt: null, state: "delivered" });
    return { state: "delivered" };
  }
  if (r.status === 410) {
    d.record({ ...out, nextAttemptAt: null, state: "failed", gone: true });
    return { state: "failed" };
  }
  // a refused URL (https only, a private address) fails for good: no retry would pass
  if (attempt >= d.settings.attempts || r.refused) {
    d.record({ ...out, nextAttemptAt: null, state: "failed" });
    return { state: "failed" };
  }
  const retryInMs = retryDelay(attempt, d.settings);
  d.record({ ...out, nextAttemptAt: new Date(now().getTime() + retryInMs).toISOString(), state: "retrying" });
  return { state: "retrying", retryInMs };
}
