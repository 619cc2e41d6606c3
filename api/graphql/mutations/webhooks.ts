// Webhooks in GraphQL: the caller's subscriptions (query `webhooks`), a webhook's delivery log
// (`webhookDeliveries`), and the mutations createWebhook, updateWebhook, deleteWebhook,
// rotateWebhookSecret, testWebhook in the interface's payload style. The signing secret is in the
// payload of createWebhook and rotateWebhookSecret only. Another user's webhook reads as none.
import {
  GraphQLBoolean,
  type GraphQLFieldConfig,
  GraphQLFloat,
  GraphQLID,
  GraphQLInputObjectType,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  type GraphQLNullableType,
  GraphQLObjectType,
  GraphQLString,
} from "graphql";
import {
  type DeliveryRecord,
  WEBHOOK_EVENT_TYPES,
  type Webhook,
  WebhookError,
  type WebhookFilters,
} from "../../../pipeline/store/webhooks/types.ts";
import { ApiError } from "../../errors.ts";
import { fail, ok, type WriteResult } from "../../resources/write-results.ts";
import type { GqlContext } from "../context.ts";
import { pageArgsOf } from "../relay.ts";
import { scoped } from "../scopes.ts";
import { mutation } from "./payload.ts";
import type { WebhookPort, WebhookTestResult } from "./webhook-port.ts";

const nn = <T extends GraphQLNullableType>(t: T) => new GraphQLNonNull(t);
const strings = () => nn(new GraphQLList(nn(GraphQLString)));

const WebhookFiltersType = new GraphQLObjectType({
  name: "WebhookFilters",
  fields: {
    minTotalChange: { type: GraphQLFloat, description: "rating.changed: only when |new − old total| ≥ this" },
    levels: { type: new GraphQLList(nn(GraphQLFloat)), description: "rating.changed: only when the total crossed one" },
    tradeValue: { type: GraphQLInt, description: "portfolio.rebalanced: the USD value its trades are computed for" },
    allowFractional: { type: GraphQLBoolean, description: "portfolio.rebalanced: fractional shares in the trades" },
  },
});

const WebhookFiltersInput = new GraphQLInputObjectType({
  name: "WebhookFiltersInput",
  fields: {
    minTotalChange: { type: GraphQLFloat },
    levels: { type: new GraphQLList(nn(GraphQLFloat)) },
    tradeValue: { type: GraphQLInt },
    allowFractional: { type: GraphQLBoolean },
  },
});

export const WebhookNode = new GraphQLObjectType<Webhook>({
  name: "Webhook",
  fields: {
    id: { type: nn(GraphQLID) },
    url: { type: nn(GraphQLString) },
    description: { type: nn(GraphQLString) },
    eventTypes: {
      type: strings(),
      description: WEBHOOK_EVENT_TYPES.join(", "),
    },
    filters: { type: nn(WebhookFiltersType) },
    enabled: { type: nn(GraphQLBoolean) },
    disabledReason: { type: GraphQLString, description: "Why the service disabled it (410 Gone, failed deliveries)" },
    consecutiveFailures: { type: nn(GraphQLInt), description: "Deliveries failed for good since the last delivered" },
    createdAt: { type: nn(GraphQLString) },
    updatedAt: { type: nn(GraphQLString) },
  },
});

const WebhookDeliveryNode = new GraphQLObjectType<DeliveryRecord>({
  name: "WebhookDelivery",
  fields: {
    eventId: { type: nn(GraphQLID) },
    eventType: { type: nn(GraphQLString) },
    attempts: { type: nn(GraphQLInt) },
    lastStatusCode: { type: GraphQLInt, resolve: (d) => d.lastStatus },
    lastError: { type: GraphQLString },
    latencyMs: { type: GraphQLFloat, description: "The last attempt's, until the status and first bytes" },
    nextAttemptAt: { type: GraphQLString, description: "null once settled" },
    state: { type: nn(GraphQLString), description: "pending, retrying, delivered, failed or cancelled" },
    updatedAt: { type: nn(GraphQLString) },
  },
});

const WebhookTestNode = new GraphQLObjectType<WebhookTestResult>({
  name: "WebhookTestResult",
  fields: {
    statusCode: { type: GraphQLInt, resolve: (t) => t.status },
    error: { type: GraphQLString },
    latencyMs: { type: nn(GraphQLFloat) },
  },
});

function portOf(ctx: GqlContext): WebhookPort {
  if (!ctx.webhooks) throw new ApiError(503, "unavailable", "this server has no webhook store");
  return ctx.webhooks;
}

/** The caller's webhook, or null (another user's reads as none). */
async function own(ctx: GqlContext, id: string): Promise<Webhook | null> {
  const w = await portOf(ctx).store.get(id);
  return w && w.ownerId === ctx.caller.user.id ? w : null;
}

/** The store's refusal as a field error: its message starts with the field's name. */
async function stored<T>(write: () => Promise<T>): Promise<WriteResult<T>> {
  try {
    return ok(await write());
  } catch (e) {
    if (!(e instanceof WebhookError)) throw e;
    const m = /^([\w.]+): (.*)$/.exec(e.message);
    return m ? fail(m[1], m[2]) : fail("input", e.message);
  }
}

interface Fields {
  url?: string | null;
  description?: string | null;
  eventTypes?: string[] | null;
  filters?: WebhookFilters | null;
}

async function urlRefused(ctx: GqlContext, url: string | null | undefined): Promise<string | null> {
  return url == null ? null : portOf(ctx).refuse(url);
}

const notFound = (id: string) => fail("webhookId", `no webhook ${id}`);

async function createWebhook(ctx: GqlContext, i: Fields): Promise<WriteResult<{ webhook: Webhook; secret: string }>> {
  const why = await urlRefused(ctx, i.url);
  if (why) return fail("url", why);
  return stored(() =>
    portOf(ctx).store.create(ctx.caller.user.id, {
      url: i.url ?? "",
      description: i.description ?? "",
      eventTypes: (i.eventTypes ?? []) as Webhook["eventTypes"],
      filters: i.filters ?? {},
    }),
  );
}

async function updateWebhook(
  ctx: GqlContext,
  i: Fields & { webhookId: string; enabled?: boolean | null },
): Promise<WriteResult<Webhook>> {
  if (!(await own(ctx, i.webhookId))) return notFound(i.webhookId);
  const why = await urlRefused(ctx, i.url);
  if (why) return fail("url", why);
  return stored(() =>
    portOf(ctx).store.update(i.webhookId, {
      url: i.url ?? undefined,
      description: i.description ?? undefined,
      eventTypes: (i.eventTypes ?? undefined) as Webhook["eventTypes"] | undefined,
      filters: i.filters ?? undefined,
      enabled: i.enabled ?? undefined,
    }),
  );
}

const byId =
  <T>(run: (port: WebhookPort, id: string) => Promise<T>) =>
  async (ctx: GqlContext, i: { webhookId: string }): Promise<WriteResult<T>> =>
    (await own(ctx, i.webhookId)) ? stored(() => run(portOf(ctx), i.webhookId)) : notFound(i.webhookId);

const fieldInput = (required: boolean) => ({
  url: { type: required ? nn(GraphQLString) : GraphQLString, description: "https, resolving to a public address" },
  description: { type: GraphQLString },
  eventTypes: {
    type: required ? strings() : new GraphQLList(nn(GraphQLString)),
    description: `One or more of ${WEBHOOK_EVENT_TYPES.join(", ")}`,
  },
  filters: { type: WebhookFiltersInput },
});
const webhookOut = { webhook: { type: WebhookNode, value: (w: Webhook) => w } };
type WithSecret = { webhook: Webhook; secret: string };
const withSecret = {
  webhook: { type: WebhookNode, value: (v: WithSecret) => v.webhook },
  secret: { type: GraphQLString, value: (v: WithSecret) => v.secret },
};
const ID = () => nn(GraphQLID);

export const webhookMutations = (): Record<string, GraphQLFieldConfig<unknown, GqlContext>> => ({
  createWebhook: mutation<Fields, WithSecret>({
    name: "createWebhook",
    description:
      "Subscribes a URL of the caller to event types (docs/api/webhooks.md). The payload's `secret` signs every " +
      "delivery and is shown here only.",
    scopes: "webhooksWrite",
    input: fieldInput(true),
    outputs: withSecret,
    run: createWebhook,
  }),
  updateWebhook: mutation<Fields & { webhookId: string; enabled?: boolean | null }, Webhook>({
    name: "updateWebhook",
    description: "Changes the given fields of one of the caller's webhooks; `enabled: true` re-enables a disabled one.",
    scopes: "webhooksWrite",
    input: { webhookId: { type: ID() }, ...fieldInput(false), enabled: { type: GraphQLBoolean } },
    outputs: webhookOut,
    run: updateWebhook,
  }),
  deleteWebhook: mutation<{ webhookId: string }, string>({
    name: "deleteWebhook",
    description: "Deletes one of the caller's webhooks and its delivery log; queued deliveries are dropped.",
    scopes: "webhooksWrite",
    input: { webhookId: { type: ID() } },
    outputs: { deletedWebhookId: { type: GraphQLID, value: (id: string) => id } },
    run: byId(async (port, id) => {
      await port.store.delete(id);
      return id;
    }),
  }),
  rotateWebhookSecret: mutation<{ webhookId: string }, WithSecret>({
    name: "rotateWebhookSecret",
    description: "Gives the webhook a new signing secret, shown here only; the next attempt signs with it.",
    scopes: "webhooksWrite",
    input: { webhookId: { type: ID() } },
    outputs: withSecret,
    run: byId((port, id) => port.store.rotateSecret(id)),
  }),
  testWebhook: mutation<{ webhookId: string }, WebhookTestResult>({
    name: "testWebhook",
    description: "Sends one signed `webhook.test` event to the webhook now and answers what the receiver did.",
    scopes: "webhooksWrite",
    input: { webhookId: { type: ID() } },
    outputs: { result: { type: WebhookTestNode, value: (r: WebhookTestResult) => r } },
    run: byId((port, id) => port.test(id)),
  }),
});

export const webhookQueries = (): Record<string, GraphQLFieldConfig<unknown, GqlContext>> => ({
  webhooks: scoped("webhooks", {
    type: nn(new GraphQLList(nn(WebhookNode))),
    description: "The caller's webhooks.",
    resolve: (_s, _a, ctx: GqlContext) => portOf(ctx).store.list(ctx.caller.user.id),
  }),
  webhookDeliveries: scoped("webhooks", {
    type: nn(new GraphQLList(nn(WebhookDeliveryNode))),
    description: "One of the caller's webhooks' deliveries, newest first (an unknown id: none).",
    args: { webhookId: { type: ID() }, first: { type: GraphQLInt, defaultValue: 50 } },
    resolve: async (_s, a: { webhookId: string; first: number }, ctx: GqlContext) => {
      // as every list's `first`: 0 to 200, else an error naming it
      const { limit } = pageArgsOf({ first: a.first });
      return limit > 0 && (await own(ctx, a.webhookId)) ? portOf(ctx).store.deliveries(a.webhookId, limit) : [];
    },
  }),
});
