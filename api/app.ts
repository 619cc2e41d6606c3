// The Express app apart from the listening process: REST /data/v1 (fifteen endpoints), the
// OpenAPI document, /healthz and /metrics. Tests and the server both build it with createApp.
import { randomUUID } from "node:crypto";
import express, { type ErrorRequestHandler, type Request, type Response } from "express";
import type pino from "pino";
import { pinoHttp } from "pino-http";
import type { Redis } from "ioredis";
import type { CatalogReader } from "../pipeline/store/catalog-types.ts";
import type { Snapshot } from "../pipeline/store/model.ts";
import { redactUrl } from "./auth.ts";
import { NotFound, toApiError } from "./errors.ts";
import { createMetrics } from "./metrics.ts";
import { openApiDocument } from "./openapi.ts";
import { BodyCache } from "./output/lru.ts";
import { createLimiter } from "./rate-limit.ts";
import { REST_ROUTES } from "./rest/index.ts";
import { mountRoutes } from "./rest/route.ts";

export interface AppDeps {
  /** The published snapshot, read once at the start of every request; null before the first. */
  snapshot: () => Snapshot | null;
  catalog: CatalogReader;
  logger: pino.Logger;
  /** Per-key limit: `points` requests per `durationSec`; shared through Redis when a client is given. */
  rateLimit?: { points: number; durationSec: number; redis?: Redis };
  /** Serialized-body cache bounds (defaults: 2000 entries, 64 MiB). */
  cache?: { maxEntries?: number; maxBytes?: number };
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

export function createApp(deps: AppDeps): express.Express {
  const app = express();
  app.set("etag", false);
  app.set("x-powered-by", false);
  app.set("query parser", "simple");

  const cache = new BodyCache(deps.cache?.maxEntries, deps.cache?.maxBytes);
  const metrics = createMetrics(deps.snapshot, cache);
  app.locals.bodyCache = cache;

  app.use(
    pinoHttp({
      logger: deps.logger,
      genReqId(req, res) {
        const h = req.headers["x-request-id"];
        const id = typeof h === "string" && REQUEST_ID.test(h) ? h : randomUUID();
        res.setHeader("X-Request-Id", id);
        return id;
      },
      // Only what is safe: the URL without its api_key, no headers (api_key may be one), no query object.
      serializers: {
        req: (r: { id: unknown; method: string; url: string; remoteAddress?: string; headers?: Record<string, unknown> }) => ({
          id: r.id,
          method: r.method,
          url: redactUrl(r.url),
          remoteAddress: r.remoteAddress,
          userAgent: r.headers?.["user-agent"],
        }),
        res: (r: { statusCode: number }) => ({ statusCode: r.statusCode }),
      },
      customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? "error" : res.statusCode >= 400 ? "warn" : "info"),
      // req.log / res.log carry only the request id (no per-request child serializing the request);
      // the access line adds the (redacted) request once, when the response finishes.
      quietReqLogger: true,
      quietResLogger: true,
      customSuccessObject: (req, _res, val) => ({ ...val, req }),
      customErrorObject: (req, _res, _err, val) => ({ ...val, req }),
      autoLogging: { ignore: (req) => req.url === "/metrics" || req.url === "/healthz" },
    }),
  );
  app.use(metrics.middleware);

  app.get("/healthz", (_req, res) => {
    const s = deps.snapshot();
    res.locals.route = "healthz";
    if (s) res.status(200).json({ status: "ok", snapshot: s.id });
    else res.status(503).json({ status: "unavailable", snapshot: null });
  });

  app.get("/metrics", async (_req, res) => {
    res.locals.route = "metrics";
    res.setHeader("Content-Type", metrics.registry.contentType);
    res.end(await metrics.registry.metrics());
  });

  let openapi: string | undefined;
  const v1 = express.Router({ strict: false, caseSensitive: true });
  v1.get("/openapi.json", (_req, res) => {
    res.locals.route = "openapi";
    openapi ??= JSON.stringify(openApiDocument(REST_ROUTES));
    res.setHeader("Content-Type", "application/json; charset=utf-8");
    res.end(openapi);
  });
  mountRoutes(v1, REST_ROUTES, { snapshot: deps.snapshot, catalog: deps.catalog, limiter: createLimiter(deps.rateLimit), cache });
  app.use("/data/v1", v1);

  app.use((req: Request) => {
    throw new NotFound(`no such endpoint: ${req.method} ${req.path}`);
  });

  const onError: ErrorRequestHandler = (err, req, res, _next) => {
    const e = toApiError(err);
    if (e.status >= 500) {
      // the detail goes to the log (pino-http attaches res.err), never to the caller
      (res as Response & { err?: unknown }).err = err;
      req.log?.error({ err, reqId: req.id }, "request failed");
    }
    if (res.headersSent) {
      res.destroy();
      return;
    }
    for (const [k, v] of Object.entries(e.headers)) res.setHeader(k, v);
    res.status(e.status);
    res.setHeader("Content-Type", "application/json; charset=utf-8");
    res.setHeader("Cache-Control", "no-store");
    res.end(JSON.stringify(e.toBody()));
  };
  app.use(onError);
  return app;
}
