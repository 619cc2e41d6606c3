// What delivery of webhooks may do, from jobs/config.ts (WEBHOOK_* variables; documented in
// docs/operators/deployment.md). Tests pass their own (short backoff, a local receiver allowed).

export interface DeliverySettings {
  /** Plain http URLs allowed (development, tests); otherwise https only. */
  allowHttp: boolean;
  /** Loopback, private, link-local … addresses allowed (development, tests). */
  allowPrivate: boolean;
  /** One attempt's whole time: connect, send, the response's status and first bytes. */
  timeoutMs: number;
  /** Attempts of one delivery, the first included. */
  attempts: number;
  /** The first retry's delay; each next one doubles, up to backoffCapMs; each is jittered (half to all of it). */
  backoffMs: number;
  backoffCapMs: number;
  /** Deliveries failed for good in a row that disable a webhook. */
  disableAfter: number;
  /** Attempts in flight in one process, and of those at most perWebhook to one webhook. */
  concurrency: number;
  perWebhook: number;
}

/**
 * 15 attempts: retries after about 10 s, 20 s, 40 s … doubling to a 6-hour cap, about 23 hours
 * in all before a delivery fails for good (the sum 10 s × (2^12 − 1) + 2 × 6 h, less the jitter).
 */
export const DELIVERY_DEFAULTS: DeliverySettings = {
  allowHttp: false,
  allowPrivate: false,
  timeoutMs: 10_000,
  attempts: 15,
  backoffMs: 10_000,
  backoffCapMs: 6 * 3600_000,
  disableAfter: 3,
  concurrency: 64,
  perWebhook: 4,
};

/** Response bytes read from a receiver (the rest is dropped): enough for an error message in the log. */
export const MAX_RESPONSE_BYTES = 4096;

/** The delay before attempt `attempt + 1`, after `attempt` failed (1-based): exponential, capped, jittered. */
export function retryDelay(
  attempt: number,
  s: Pick<DeliverySettings, "backoffMs" | "backoffCapMs">,
  random = Math.random,
) {
  const full = Math.min(s.backoffCapMs, s.backoffMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(full / 2 + (random() * full) / 2);
}
