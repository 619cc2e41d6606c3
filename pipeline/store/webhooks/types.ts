// Webhook subscriptions and their deliveries: the port the API, the event step and the delivery
// workers use. The embedded implementation is embedded.ts (a DuckDB file of its own); another
// store (PostgreSQL) implements the same interface.

export const WEBHOOK_EVENT_TYPES = [
  "rating.changed",
  "portfolio.rebalanced",
  "portfolio.failed",
  "snapshot.published",
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** What a subscription narrows its events by; every field optional. */
export interface WebhookFilters {
  /** rating.changed: only when |new total − old total| is at least this. */
  minTotalChange?: number;
  /** rating.changed: only when the total crossed one of these levels (old < level <= new or back). */
  levels?: number[];
  /** portfolio.rebalanced: the cash amount its trades are computed for (portfolio_trades' `value`). */
  tradeValue?: number;
  /** portfolio.rebalanced: trades in 6-decimal fractions of shares. */
  allowFractional?: boolean;
}

export interface Webhook {
  id: string;
  ownerId: string;
  url: string;
  description: string;
  eventTypes: WebhookEventType[];
  filters: WebhookFilters;
  enabled: boolean;
  /** Why the service disabled it (410 Gone, a run of failed deliveries); null when enabled or disabled by its owner. */
  disabledReason: string | null;
  /** Deliveries failed for good since the last delivered one. */
  consecutiveFailures: number;
  createdAt: string;
  updatedAt: string;
}

export interface WebhookFields {
  url: string;
  description?: string;
  eventTypes: WebhookEventType[];
  filters?: WebhookFilters;
}

export interface WebhookPatch extends Partial<WebhookFields> {
  /** true re-enables a disabled webhook (its failure count starts again at 0). */
  enabled?: boolean;
}

export type DeliveryState = "pending" | "retrying" | "delivered" | "failed" | "cancelled";

/** One delivery (an event to a webhook) as it stands after its latest attempt. */
export interface DeliveryRecord {
  webhookId: string;
  eventId: string;
  eventType: string;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  latencyMs: number | null;
  nextAttemptAt: string | null;
  state: DeliveryState;
  updatedAt: string;
}

/** The result of one attempt, as a delivery worker reports it. */
export interface AttemptOutcome {
  webhookId: string;
  eventId: string;
  eventType: string;
  attempt: number;
  status: number | null;
  error: string | null;
  latencyMs: number | null;
  /** When the next attempt is due; null when none follows. */
  nextAttemptAt: string | null;
  state: DeliveryState;
  /** The receiver answered 410 Gone: the webhook is disabled at once. */
  gone?: boolean;
}

/** A webhook as a delivery signs with: the shared secret travels only inside the process. */
export interface SigningWebhook {
  id: string;
  url: string;
  enabled: boolean;
  secret: string;
}

export interface WebhookStore {
  /** The secret is returned here (and by rotateSecret) only; reads never show it. */
  create(ownerId: string, fields: WebhookFields): Promise<{ webhook: Webhook; secret: string }>;
  update(id: string, patch: WebhookPatch): Promise<Webhook>;
  delete(id: string): Promise<void>;
  rotateSecret(id: string): Promise<{ webhook: Webhook; secret: string }>;
  get(id: string): Promise<Webhook | null>;
  /** A user's webhooks, or every webhook when no owner is named. */
  list(ownerId?: string): Promise<Webhook[]>;
  /** Enabled webhooks subscribed to at least one of the types. */
  subscribers(types: readonly WebhookEventType[]): Promise<Webhook[]>;
  /** For signing: null when the webhook no longer exists. */
  signing(id: string): Promise<SigningWebhook | null>;
  /** A webhook's deliveries, newest first. */
  deliveries(webhookId: string, limit?: number): Promise<DeliveryRecord[]>;
  /**
   * Records attempts (in their order); a delivery failed for good counts toward `disableAfter`
   * consecutive failures, a 410 disables at once, a delivered one resets the count.
   */
  recordAttempts(outcomes: AttemptOutcome[], disableAfter: number): Promise<void>;
}

export const MAX_WEBHOOKS_PER_USER = 20;

export class WebhookError extends Error {
  constructor(
    /** `limit`: the owner holds MAX_WEBHOOKS_PER_USER already; nothing was written */
    readonly code: "not_found" | "invalid" | "limit",
    message: string,
  ) {
    super(message);
    this.name = "WebhookError";
  }
}
