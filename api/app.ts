// The Express app apart from the listening process: REST /data/v1 (fifteen endpoints), GraphQL
// at /graphiql, the OpenAPI document, /healthz, /metrics and the web app's static files at /.
// Tests and the server both build it with createApp.
import cors from "cors";
import express, { type ErrorRequestHandler, type Request, type Response } from "express";
import type { Redis } from "ioredis";
import type pino from "pino";
import type { Registry } from "prom-client";
import type { CatalogReader, CatalogWriter } from "../pipeline/store/catalog/types.ts";
import { accessLog, type OnFinish, requestId } from "./access-log.ts";
import { adminGate } from "./admin.ts";
import { type AuthFailureOptions, type AuthGuard, createAuthGuard } from "./auth-failures.ts";
import { docsHandler } from "./docs.ts";
import { NotFound, toApiError } from "./errors.ts";
import { createFastPath, type FastEnv, type FastPath } from "./fast/fast-path.ts";
import { COST_PER_MINUTE } from "./graphql/cost.ts";
import { type GraphqlLimits, graphqlHandler } from "./graphql/http.ts";
import { isGraphqlUrl } from "./graphql/ide.ts";
import type { WebhookPort } from "./graphql/mutations/webhook-port.ts";
import { openApiDocument } from "./openapi.ts";
import { AnswerCache, DEFAULT_RESPONSE_CACHE_BYTES } from "./output/answer-cache.ts";
import { encodeFor } from "./output/compress.ts";
import { BodyCache } from "./output/lru.ts";
import { createMetrics } from "./prometheus.ts";
import { type CostBudget, createCostBudget, createLimiter, type Limiter } from "./rate-limit.ts";
import type { SnapshotRef } from "./resources/snapshot-access.ts";
import { type DispatchEntry, restDispatcher } from "./rest/dispatch.ts";
import { exportEntries } from "./rest/export.ts";
import { REST_ROUTES } from "./rest/index.ts";
import { restEntries } from "./rest/route.ts";
import { webhookEntries } from "./rest/webhooks.ts";
import { type HeaderSet, securityHeaders, setAll } from "./security-headers.ts";
import { webHandler } from "./web-static.ts";

export interface AppDeps {
  /** The published snapshot, read once at the start of every request; null before the first. */
  snapshot: () => SnapshotRef | null;
  catalog: CatalogReader;
  logger: pino.Logger;
  /** Access log lines (one per response); default: `logger`. */
  accessLogger?: pino.Logger;
  /** Per-key limit: `points` requests per `durationSec`; shared through Redis when a client is given. */
  rateLimit?: { points: number; durationSec: number; redis?: Redis; prefix?: string };
  /** Failed authentications allowed per client address (429 past them); shared through Redis when a client is given. */
  authFailureLimit?: AuthFailureOptions;
  /** Proxy hops whose X-Forwarded-For entry names the client (api/client-address.ts); default 0: the socket's peer. */
  trustProxy?: number;
  /** Origins allowed to read responses from a browser (CORS), or "*"; default none. */
  cors?: readonly string[] | "*";
  /** Serialized-body cache bounds (defaults: 2000 entries, 64 MiB). */
  cache?: { maxEntries?: number; maxBytes?: number };
  /** The queue dashboard (jobs/host/dashboard.ts), mounted at its path behind the `admin` scope. */
  admin?: { path: string; router: express.RequestHandler };
  /** Catalog writes for GraphQL mutations (the catalog itself, usually); without it mutations answer an error. */
  catalogWriter?: CatalogWriter;
  /** Port to the job runner: a user portfolio changed, rebalance it (jobs/ implements it). */
  requestRebalance?: (portfolioId: string) => void;
  /** Webhook subscriptions for GraphQL (jobs/ implements the port); without it those fields answer an error. */
  webhooks?: WebhookPort;
  /** GraphQL whole-response cache of snapshot-only queries; default on. */
  graphqlResponseCache?: boolean;
  /** Bytes of the response cache the node:http fast path serves from (RESPONSE_CACHE_MB); 0: no fast path. */
  responseCacheBytes?: number;
  /** GraphQL cost points per key per minute (default COST_PER_MINUTE), in rateLimit's store. */
  graphqlCostPerMinute?: number;
  /** Overrides of the GraphQL request limits (api/graphql/http.ts GRAPHQL_LIMITS). */
  graphqlLimits?: Partial<GraphqlLimits>;
}

/** What the read path's layers share: one of each per app, so REST and GraphQL count together. */
interface Shared {
  cache: BodyCache;
  answers: AnswerCache;
  /** Starts a request's access-log record and metrics. */
  observe: ReturnType<typeof accessLog>;
  /** Helmet's headers (+ Vary: Origin when CORS answers depend on it), sent with every response. */
  baseHeaders: HeaderSet;
  corsLayer: ReturnType<typeof corsMiddleware> | null;
  limiter: Limiter | null;
  authGuard: AuthGuard | null;
  costBudget: CostBudget;
}

export function createApp(deps: AppDeps): express.Express {
  const app = express();
  app.set("etag", false);
  app.set("x-powered-by", false);
  app.set("query parser", "simple");

  const cache = new BodyCache(deps.cache?.maxEntries, deps.cache?.maxBytes);
  const answers = new AnswerCache(deps.responseCacheBytes || DEFAULT_RESPONSE_CACHE_BYTES);
  const metrics = createMetrics(deps.snapshot, cache, answers);
  app.locals.bodyCache = cache;
  const shared = sharedParts(deps, cache, answers, metrics.observe);

  const read = readPath(deps, shared);
  app.locals.fastPath = deps.responseCacheBytes === 0 ? null : fastPathOf(deps, shared);
  app.use(read);
  app.use((_req, res, next) => {
    setAll(res, shared.baseHeaders);
    next();
  });
  mountPages(app, deps, metrics.registry);
  app.use((req: Request) => {
    throw new NotFound(`no such endpoint: ${req.method} ${req.path}`);
  });
  app.use(errorHandler(deps.logger, shared.baseHeaders));
  return app;
}

/** The access log, the headers, CORS and the limits, built once for the app. */
function sharedParts(deps: AppDeps, cache: BodyCache, answers: AnswerCache, onFinish: OnFinish): Shared {
  const observe = accessLog(
    deps.accessLogger ?? deps.logger,
    onFinish,
    deps.catalog.isKeyHash && ((h) => deps.catalog.isKeyHash?.(h) ?? false),
    deps.trustProxy,
  );
  const baseHeaders = {
    ...securityHeaders(deps.cors !== undefined),
    ...(Array.isArray(deps.cors) ? { Vary: "Origin" } : {}),
  };
  const corsLayer = deps.cors === undefined ? null : corsMiddleware(deps.cors);
  const limiter = createLimiter(deps.rateLimit); // one per app: REST and GraphQL count against the same limit
  const authGuard = createAuthGuard(deps.authFailureLimit); // one per app: REST and GraphQL failures count together
  const costBudget = createCostBudget({
    points: deps.graphqlCostPerMinute ?? COST_PER_MINUTE,
    durationSec: 60,
    redis: deps.rateLimit?.redis,
    prefix: deps.rateLimit?.prefix && `${deps.rateLimit.prefix}:gql-cost`,
  });
  return { cache, answers, observe, baseHeaders, corsLayer, limiter, authGuard, costBudget };
}

/** GET /openapi.json: the document built on first use, then served from memory. */
function openApiEntry(baseHeaders: HeaderSet): DispatchEntry {
  let openapi: Buffer | undefined;
  return {
    path: "/openapi.json",
    handle: (req: Request, res: Response) => {
      res.locals.route = "openapi";
      openapi ??= Buffer.from(JSON.stringify(openApiDocument(REST_ROUTES)), "utf8");
      const headers: Record<string, string | number> = {
        "Content-Type": "application/json; charset=utf-8",
        "X-Request-Id": requestId(res),
        ...baseHeaders,
      };
      const body = encodeFor(req, openapi, headers);
      res.writeHead(200, headers);
      res.end(body);
    },
  };
}

/** The /graphiql handler over the app's shared limits and response cache. */
function graphqlOf(deps: AppDeps, s: Shared): express.RequestHandler {
  return graphqlHandler({
    snapshot: deps.snapshot,
    catalog: deps.catalog,
    writer: deps.catalogWriter,
    requestRebalance: deps.requestRebalance,
    webhooks: deps.webhooks,
    limiter: s.limiter,
    authGuard: s.authGuard,
    trustProxy: deps.trustProxy,
    logger: deps.logger,
    responseCache: deps.graphqlResponseCache,
    costBudget: s.costBudget,
    limits: deps.graphqlLimits,
    answers: s.answers,
  });
}

/** The node:http fast path over the app's response cache (api/server.ts asks it first). */
function fastPathOf(deps: AppDeps, s: Shared): FastPath {
  return createFastPath({
    snapshot: deps.snapshot,
    catalog: deps.catalog,
    answers: s.answers,
    limiter: s.limiter,
    authGuard: s.authGuard,
    trustProxy: deps.trustProxy ?? 0,
    costBudget: s.costBudget,
    observe: s.observe as FastEnv["observe"],
    baseHeaders: s.baseHeaders,
    cors: s.corsLayer as FastEnv["cors"],
  });
}

// One router layer for the whole read path (REST, the OpenAPI document and /graphiql): every
// Express layer walked costs on each request.
function readPath(deps: AppDeps, s: Shared): express.RequestHandler {
  const env = {
    snapshot: deps.snapshot,
    catalog: deps.catalog,
    limiter: s.limiter,
    authGuard: s.authGuard,
    trustProxy: deps.trustProxy,
    cache: s.cache,
  };
  const rest = restDispatcher([
    openApiEntry(s.baseHeaders),
    ...restEntries(REST_ROUTES, env),
    ...exportEntries(env),
    ...webhookEntries(env, deps.webhooks),
  ]);
  const graphql = graphqlOf(deps, s);
  const { baseHeaders, corsLayer, observe } = s;
  return (req, res, next) => {
    res.locals.baseHeaders = baseHeaders; // REST responses add them in their writeHead (output/payload.ts)
    observe(req, res);
    // /graphiql in the same one layer; its responses take the security headers through setHeader
    const route = isGraphqlUrl(req.url)
      ? () => {
          setAll(res, baseHeaders);
          return graphql(req, res, next);
        }
      : () => rest(req, res, next);
    // CORS only when asked: a request without Origin skips the middleware and its setHeader calls
    if (corsLayer !== null && req.headers.origin !== undefined) corsLayer(req, res, route);
    else route();
  };
}

/** The documentation, the web app, /healthz, /metrics and the queue dashboard. */
function mountPages(app: express.Express, deps: AppDeps, registry: Registry): void {
  app.get("/docs", docsHandler);
  app.get("/docs/redoc.standalone.js", docsHandler);
  app.get(["/", "/web/:file"], webHandler); // the web app (web/): static files, a client of the API

  app.get("/healthz", (_req, res) => {
    const s = deps.snapshot();
    res.locals.route = "healthz";
    if (s) res.status(200).json({ status: "ok", snapshot: s.id });
    else res.status(503).json({ status: "unavailable", snapshot: null });
  });

  app.get("/metrics", async (_req, res) => {
    res.locals.route = "metrics";
    res.setHeader("Content-Type", registry.contentType);
    res.end(await registry.metrics());
  });

  if (deps.admin) app.use(deps.admin.path, adminGate(deps.catalog), deps.admin.router);
}

/** Every error as its JSON body and status; a 5xx's detail goes to the log, never to the caller. */
function errorHandler(logger: pino.Logger, baseHeaders: HeaderSet): ErrorRequestHandler {
  return (err, _req, res, _next) => {
    const e = toApiError(err);
    if (e.status >= 500) logger.error({ err, reqId: requestId(res) }, "request failed");
    if (res.headersSent) {
      res.destroy();
      return;
    }
    setAll(res, baseHeaders);
    for (const [k, v] of Object.entries(e.headers)) res.setHeader(k, v);
    res.setHeader("X-Request-Id", requestId(res));
    res.status(e.status);
    res.setHeader("Content-Type", "application/json; charset=utf-8");
    res.setHeader("Cache-Control", "no-store");
    res.end(JSON.stringify(e.toBody()));
  };
}

/** Browsers may read responses from these origins; the api_key header and If-None-Match may be sent. */
function corsMiddleware(origins: readonly string[] | "*") {
  return cors({
    origin: origins === "*" ? "*" : [...origins],
    methods: ["GET", "HEAD", "POST"],
    allowedHeaders: ["api_key", "Content-Type", "If-None-Match", "X-Request-Id"],
    exposedHeaders: [
      "ETag",
      "Retry-After",
      "X-RateLimit-Limit",
      "X-RateLimit-Remaining",
      "X-RateLimit-Reset",
      "X-Request-Id",
      "Content-Disposition",
      "Link",
      "X-Total-Count",
    ],
    maxAge: 600,
  });
}
