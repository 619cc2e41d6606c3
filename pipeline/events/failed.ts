// portfolio.failed: a user portfolio's rebalance failed for good (the catalog's rebalance_failures
// records it). One event per failed request, not per publish: its id hashes the portfolio and the
// change time that asked for the rebalance, so the failure noted again (a retried job, a second
// process) gives the same id and the delivery queue joins it.
import { createHash } from "node:crypto";
import type { Webhook } from "../store/webhooks/types.ts";
import { type DeliveryBody, envelope } from "./payloads.ts";
import type { ServiceEvent } from "./types.ts";

export interface RebalanceFailureFact {
  portfolioId: string;
  ownerId: string;
  requestedAt: string | null;
  failedAt: string;
  reason: string;
  /** The snapshot served when it failed; null before the first publish. */
  snapshotId: string | null;
}

const MAX_REASON = 500;

export function portfolioFailedEvent(f: RebalanceFailureFact): Extract<ServiceEvent, { type: "portfolio.failed" }> {
  const subject = `${f.portfolioId}|${f.requestedAt ?? f.failedAt}`;
  const id = `evt_${createHash("sha256").update(`portfolio.failed|${subject}`).digest("hex").slice(0, 32)}`;
  const firstLine = f.reason.split("\n")[0].trim();
  return {
    id,
    type: "portfolio.failed",
    timestamp: f.failedAt,
    snapshot: f.snapshotId,
    data: {
      portfolioId: f.portfolioId,
      requestedAt: f.requestedAt,
      failedAt: f.failedAt,
      reason: firstLine.length > MAX_REASON ? `${firstLine.slice(0, MAX_REASON - 1)}…` : firstLine,
    },
  };
}

/** The bodies for the owner's enabled webhooks subscribed to portfolio.failed (never another user's). */
export function failedDeliveries(f: RebalanceFailureFact, subscribers: Webhook[]): DeliveryBody[] {
  const e = portfolioFailedEvent(f);
  const body = envelope(e, e.data);
  return subscribers
    .filter((w) => w.enabled && w.ownerId === f.ownerId && w.eventTypes.includes("portfolio.failed"))
    .map((w) => ({ webhookId: w.id, eventId: e.id, eventType: e.type, body }));
}
