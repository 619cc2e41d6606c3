// GET /data/v1/webhooks and /data/v1/webhooks/:id/deliveries: the caller's webhooks and one's
// deliveries, the fields the GraphQL queries `webhooks` and `webhookDeliveries` give. They read the
// webhook store (through the API's WebhookPort), not the snapshot, so they answer before the first
// publish; checks in the REST routes' order (key, rate limit, scope webhooks:read, parameters, 404).
import type { Request, Response } from "express";
import { z } from "zod";
import type { DeliveryRecord, Webhook } from "../../pipeline/store/webhooks/types.ts";
import { requestId } from "../access-log.ts";
import { queryKey, requireScopes } from "../auth.ts";
import { NotFound, Unavailable } from "../errors.ts";
import type { WebhookPort } from "../graphql/mutations/webhook-port.ts";
import { bodyEtag, etagMatches } from "../output/etag.ts";
import type { RateHeaders } from "../rate-limit.ts";
import { RESOURCE_SCOPES } from "../resources/scopes.ts";
import type { DispatchEntry } from "./dispatch.ts";
import { invalidFromZod, limitParam } from "./params.ts";
import { checkQuery, gated, type RouteEnv } from "./route.ts";

const msg = (m: string) => ({ error: m });

export const webhooksQuery = z.object({});
export const deliveriesQuery = z.object({ limit: limitParam });
export const webhookIdParam = z
  .string()
  .regex(/^wh_[0-9]{1,18}$/, msg("must be a webhook id (wh_ and digits)"))
  .meta({ description: "Webhook id (wh_…)" });

const nullable = <T extends z.ZodType>(t: T) => t.nullable();
export const WebhookSchema = z.object({
  id: z.string(),
  url: z.string(),
  description: z.string(),
  eventTypes: z.array(z.string()),
  filters: z.object({
    minTotalChange: z.number().optional(),
    levels: z.array(z.number()).optional(),
    tradeValue: z.number().optional(),
    allowFractional: z.boolean().optional(),
  }),
  enabled: z.boolean(),
  disabledReason: nullable(z.string()),
  consecutiveFailures: z.number().int(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export const WebhookDeliverySchema = z.object({
  eventId: z.string(),
  eventType: z.string(),
  attempts: z.number().int(),
  lastStatusCode: nullable(z.number().int()),
  lastError: nullable(z.string()),
  latencyMs: nullable(z.number()),
  nextAttemptAt: nullable(z.string()),
  state: z.enum(["pending", "retrying", "delivered", "failed", "cancelled"]),
  updatedAt: z.string(),
});

/** The GraphQL field names (`lastStatusCode`, not the store's `lastStatus`); no secret, no owner. */
const webhookOut = (w: Webhook) => ({
  id: w.id,
  url: w.url,
  description: w.description,
  eventTypes: w.eventTypes,
  filters: w.filters,
  enabled: w.enabled,
  disabledReason: w.disabledReason,
  consecutiveFailures: w.consecutiveFailures,
  createdAt: w.createdAt,
  updatedAt: w.updatedAt,
});
const deliveryOut = (d: DeliveryRecord) => ({
  eventId: d.eventId,
  eventType: d.eventType,
  attempts: d.attempts,
  lastStatusCode: d.lastStatus,
  lastError: d.lastError,
  latencyMs: d.latencyMs,
  nextAttemptAt: d.nextAttemptAt,
  state: d.state,
  updatedAt: d.updatedAt,
});

function sendJson(req: Request, res: Response, value: unknown, rate?: RateHeaders): void {
  const body = Buffer.from(JSON.stringify(value), "utf8");
  const etag = bodyEtag(body);
  const headers: Record<string, string | number> = {
    "X-Request-Id": requestId(res),
    ETag: etag,
    "Cache-Control": "private, no-cache",
    ...(rate ?? {}),
  };
  if (etagMatches(req.headers["if-none-match"], etag)) {
    res.writeHead(304, headers).end();
    return;
  }
  res.writeHead(200, { ...headers, "Content-Type": "application/json; charset=utf-8", "Content-Length": body.length });
  res.end(req.method === "HEAD" ? undefined : body);
}

/** The query parsed (control characters and bad values: a 400 naming the parameter, after the key's checks). */
function parse<S extends z.ZodObject>(req: Request, schema: S) {
  const query = req.query as Record<string, unknown>;
  return { key: queryKey(query), parsed: checkQuery(query, schema) };
}

export function webhookEntries(env: RouteEnv, port: WebhookPort | undefined): DispatchEntry[] {
  const store = () => {
    if (!port) throw new Unavailable("webhooks are not enabled on this server");
    return port.store;
  };
  return [
    {
      path: "/webhooks",
      handle: (req, res) => {
        res.locals.route = "webhooks_list";
        const { key, parsed } = parse(req, webhooksQuery);
        return gated(req, res, env, key, async (caller, rate) => {
          requireScopes(caller, RESOURCE_SCOPES.webhooks);
          if (!parsed.success) throw invalidFromZod(parsed.issues);
          const hooks = await store().list(caller.user.id);
          sendJson(req, res, hooks.map(webhookOut), rate);
        });
      },
    },
    {
      path: "/webhooks/:id/deliveries",
      handle: (req, res, path) => {
        res.locals.route = "webhook_deliveries";
        const { key, parsed } = parse(req, deliveriesQuery);
        return gated(req, res, env, key, async (caller, rate) => {
          requireScopes(caller, RESOURCE_SCOPES.webhooks);
          const id = webhookIdParam.safeParse(path.id);
          // every bad parameter named in one 400; control characters first, alone (as on every route)
          const control = !parsed.success && parsed.control;
          const idIssues = id.success || control ? [] : id.error.issues.map((i) => ({ ...i, path: ["id"] }));
          const issues = [...idIssues, ...(parsed.success ? [] : parsed.issues)];
          if (!id.success || !parsed.success) throw invalidFromZod(issues);
          const hook = await store().get(id.data);
          // another user's webhook reads as unknown, as in GraphQL
          if (!hook || hook.ownerId !== caller.user.id) throw new NotFound(`no webhook ${id.data}`);
          sendJson(req, res, (await store().deliveries(hook.id, parsed.data.limit)).map(deliveryOut), rate);
        });
      },
    },
  ];
}
