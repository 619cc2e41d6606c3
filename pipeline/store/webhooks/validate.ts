// What a webhook's fields must be, checked before anything is written (WebhookError "invalid"
// names the field). Whether plain http or a private address is allowed is the operator's
// setting, checked by the delivery's guard when it connects (and by the API on create).
import {
  WEBHOOK_EVENT_TYPES,
  WebhookError,
  type WebhookEventType,
  type WebhookFields,
  type WebhookFilters,
} from "./types.ts";

const MAX_URL = 2000;
const MAX_LEVELS = 20;

export function checkUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new WebhookError("invalid", "url: not an absolute URL");
  }
  if (u.protocol !== "https:" && u.protocol !== "http:") throw new WebhookError("invalid", "url: must be https");
  if (u.username || u.password) throw new WebhookError("invalid", "url: must not carry credentials");
  if (url.length > MAX_URL) throw new WebhookError("invalid", `url: at most ${MAX_URL} characters`);
  return u.toString();
}

export function checkTypes(types: readonly string[]): WebhookEventType[] {
  const bad = types.filter((t) => !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(t));
  if (bad.length || types.length === 0)
    throw new WebhookError("invalid", `eventTypes: one or more of ${WEBHOOK_EVENT_TYPES.join(", ")}`);
  return [...new Set(types)] as WebhookEventType[];
}

export function checkFilters(f: WebhookFilters = {}): WebhookFilters {
  const out: WebhookFilters = {};
  const finite = (v: unknown) => typeof v === "number" && Number.isFinite(v);
  if (f.minTotalChange != null) {
    if (!finite(f.minTotalChange) || f.minTotalChange < 0)
      throw new WebhookError("invalid", "filters.minTotalChange: a number >= 0");
    out.minTotalChange = f.minTotalChange;
  }
  if (f.levels != null) {
    if (!Array.isArray(f.levels) || f.levels.length > MAX_LEVELS || !f.levels.every(finite))
      throw new WebhookError("invalid", `filters.levels: at most ${MAX_LEVELS} numbers`);
    if (f.levels.length) out.levels = [...new Set(f.levels)].sort((a, b) => a - b);
  }
  if (f.tradeValue != null) {
    if (!Number.isInteger(f.tradeValue) || f.tradeValue <= 0)
      throw new WebhookError("invalid", "filters.tradeValue: a positive whole number of USD");
    out.tradeValue = f.tradeValue;
  }
  if (f.allowFractional != null) out.allowFractional = Boolean(f.allowFractional);
  return out;
}

export function checkFields(w: WebhookFields): Required<WebhookFields> {
  return {
    url: checkUrl(w.url),
    description: (w.description ?? "").slice(0, 500),
    eventTypes: checkTypes(w.eventTypes),
    filters: checkFilters(w.filters),
  };
}
