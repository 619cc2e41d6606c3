// One publish's events and deliveries: computed on a DuckDB connection of the caller's (in memory).
import { openDuck } from "../store/duck/duck.ts";
import type { Webhook, WebhookStore } from "../store/webhooks/types.ts";
import { computeEvents, type EventInputs } from "./compute.ts";
import { fanOut, type WatchSource } from "./fanout.ts";
import { type DeliveryBody, deliveryBodies } from "./payloads.ts";
import type { ServiceEvent } from "./types.ts";

export { failedDeliveries, portfolioFailedEvent, type RebalanceFailureFact } from "./failed.ts";
export type { WatchedTicker, WatchSource } from "./fanout.ts";
export type { DeliveryBody } from "./payloads.ts";
export type { ServiceEvent } from "./types.ts";

export interface PublishEvents {
  events: ServiceEvent[];
  deliveries: DeliveryBody[];
}

/** The events between two snapshots and one body per (event, subscribed webhook). */
export async function eventsOfPublish(
  input: EventInputs,
  store: Pick<WebhookStore, "subscribers">,
  watchedBy: WatchSource,
): Promise<PublishEvents> {
  const db = await openDuck(":memory:", { threads: "2" });
  try {
    const { events, companies } = await computeEvents(db.conn, input);
    const subs = await store.subscribers(["rating.changed", "portfolio.rebalanced", "snapshot.published"]);
    const raters = [...new Set(subs.filter((w) => w.eventTypes.includes("rating.changed")).map((w) => w.ownerId))];
    const watches = raters.length ? await watchedBy(raters) : [];
    const published = events.find((e) => e.type === "snapshot.published")!;
    const deliveries = await fanOut(db.conn, subs, watches, published.id);
    const webhooks = new Map<string, Webhook>(subs.map((w) => [w.id, w]));
    return { events, deliveries: deliveryBodies(events, deliveries, webhooks, companies) };
  } finally {
    db.close();
  }
}
