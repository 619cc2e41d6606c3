// The body each delivery sends: the event, and what is the recipient's own (its watchlists that
// hold the ticker; the trades for the value its webhook names, as portfolio_trades computes them).
import { computeTrades, type TradeRow } from "../portfolios/trades.ts";
import type { Webhook } from "../store/webhooks/types.ts";
import type { Company, HoldingRow } from "../types.ts";
import type { CompanyNames } from "./compute.ts";
import type { Delivery, ServiceEvent } from "./types.ts";

export interface DeliveryBody {
  webhookId: string;
  eventId: string;
  eventType: ServiceEvent["type"];
  /** The JSON text signed and sent. */
  body: string;
}

export function deliveryBodies(
  events: ServiceEvent[],
  deliveries: Delivery[],
  webhooks: Map<string, Webhook>,
  companies: CompanyNames,
): DeliveryBody[] {
  const byId = new Map(events.map((e) => [e.id, e]));
  const trades = new Map<string, TradeRow[]>();
  const ratingHeads = new Map<string, string>();
  return deliveries.map((d) => {
    const e = byId.get(d.eventId)!;
    const w = webhooks.get(d.webhookId)!;
    let data: unknown = e.data;
    if (e.type === "rating.changed") {
      // the event's JSON once, the recipient's watchlists spliced in: a night has ~200,000 of these
      let head = ratingHeads.get(e.id);
      if (head === undefined) {
        const whole = envelope(e, { ...e.data, watchlists: [] });
        head = whole.slice(0, whole.length - "[]}}".length);
        ratingHeads.set(e.id, head);
      }
      return {
        webhookId: d.webhookId,
        eventId: e.id,
        eventType: e.type,
        body: `${head}${d.watchlistsJson ?? "[]"}}}`,
      };
    }
    if (e.type === "portfolio.rebalanced") {
      const { tradeValue, allowFractional = false } = w.filters;
      const key = `${e.id}|${tradeValue}|${allowFractional}`;
      if (tradeValue && !trades.has(key)) trades.set(key, tradesOf(e.data, companies, tradeValue, allowFractional));
      data = { ...e.data, tradeValue: tradeValue ?? null, trades: tradeValue ? trades.get(key) : null };
    }
    return { webhookId: d.webhookId, eventId: e.id, eventType: e.type, body: envelope(e, data) };
  });
}

/** The body's JSON: the envelope's keys in this order, `data` last (the splice above relies on it). */
export const envelope = (e: ServiceEvent, data: unknown) =>
  JSON.stringify({ id: e.id, type: e.type, timestamp: e.timestamp, snapshot: e.snapshot, data });

function tradesOf(
  p: Extract<ServiceEvent, { type: "portfolio.rebalanced" }>["data"],
  names: CompanyNames,
  value: number,
  allowFractional: boolean,
): TradeRow[] {
  const holdings = p.holdings.map((h) => ({ date: p.rebalanceDate, ticker: h.ticker, price: h.price }) as HoldingRow);
  const companies = new Map<string, Company>();
  for (const h of p.holdings) {
    const c = names.get(h.ticker);
    if (c) companies.set(h.ticker, { id: c.id, ticker: h.ticker, name: c.name } as Company);
  }
  return computeTrades({ holdings, companies, value, allowFractional });
}
