// The one request pipeline every REST endpoint runs through: snapshot read once, key, rate limit,
// scopes, 503, parameters (zod → 400), the route's resolve (404s, semantic 400s), then the body
// from the per-snapshot LRU or built once, with ETag / If-None-Match.
import type { Request, RequestHandler, Response, Router } from "express";
import type { z } from "zod";
import type { CatalogReader } from "../../pipeline/store/catalog-types.ts";
import type { Snapshot } from "../../pipeline/store/model.ts";
import { authenticate, ENDPOINT_SCOPES, requireScopes, type Caller, type EndpointName } from "../auth.ts";
import { Unavailable } from "../errors.ts";
import { bodyEtag, etagMatches, requestEtag } from "../output/etag.ts";
import type { BodyCache } from "../output/lru.ts";
import { sendBody, sendNotModified, type Format, type Payload } from "../output/payload.ts";
import type { Limiter } from "../rate-limit.ts";
import { indexOf, type SnapshotIndex } from "./indexes.ts";
import { formatParam, invalidFromZod } from "./params.ts";

export interface RouteContext<P> {
  snapshot: Snapshot;
  idx: SnapshotIndex;
  caller: Caller;
  catalog: CatalogReader;
  params: P;
  path: Record<string, string>;
}

export interface Resolved {
  /**
   * Cache key when the body depends only on the snapshot and this key (normalized request).
   * Omitted for bodies that read the mutable catalog: those are built per request and tagged by content.
   */
  key?: string;
  build(): Payload;
}

export interface RouteDef<S extends z.ZodObject = z.ZodObject> {
  /** operationId and metrics label */
  id: string;
  endpoint: EndpointName;
  /** Express path under /data/v1, e.g. /stock_ratings/:ticker */
  path: string;
  summary: string;
  pathParams?: Record<string, string>;
  query: S;
  response: z.ZodType;
  resolve(ctx: RouteContext<z.output<S>>): Resolved;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyRoute = RouteDef<any>;
export const defineRoute = <S extends z.ZodObject>(def: RouteDef<S>): AnyRoute => def as AnyRoute;

export interface RouteEnv {
  snapshot: () => Snapshot | null;
  catalog: CatalogReader;
  limiter: Limiter | null;
  cache: BodyCache;
}

export const withFormat = (q: z.ZodObject) => q.extend({ format: formatParam });

type Parsed = { format: Format; params: Record<string, unknown> };

function handler(def: AnyRoute, env: RouteEnv): RequestHandler {
  const schema = withFormat(def.query);
  const scopes = ENDPOINT_SCOPES[def.endpoint];
  // Validated parameters per raw query string (bounded): repeated reads skip zod entirely.
  const parsedCache = new Map<string, Parsed>();
  return async (req: Request, res: Response) => {
    const snapshot = env.snapshot(); // read once: a swap mid-request never mixes two snapshots
    res.locals.route = def.id;
    const query = req.query as Record<string, unknown>; // Express 5 parses on every access: once here
    const caller = authenticate(req, env.catalog, query);
    if (env.limiter) await env.limiter(caller.key.id, res);
    requireScopes(caller, scopes);
    if (!snapshot) throw new Unavailable();
    const q = req.url.indexOf("?");
    const raw = q < 0 ? "" : req.url.slice(q + 1);
    let parsedParams = parsedCache.get(raw);
    if (!parsedParams) {
      const parsed = schema.safeParse(query);
      if (!parsed.success) throw invalidFromZod(parsed.error.issues);
      const { format, ...rest } = parsed.data as { format: Format } & Record<string, unknown>;
      parsedParams = { format, params: rest };
      if (parsedCache.size >= 1000) parsedCache.clear();
      if (raw.length <= 2048) parsedCache.set(raw, parsedParams);
    }
    const { format, params } = parsedParams;
    const r = def.resolve({ snapshot, idx: indexOf(snapshot), caller, catalog: env.catalog, params, path: req.params as Record<string, string> });
    const inm = req.headers["if-none-match"];
    if (r.key !== undefined) {
      const ck = `${snapshot.id}|${format}|${def.id}|${r.key}`;
      let hit = env.cache.get(ck);
      const etag = hit?.etag ?? requestEtag(snapshot.id, ck);
      if (etagMatches(inm, etag)) return sendNotModified(res, etag);
      if (!hit) {
        const p = r.build();
        hit = { etag, body: Buffer.from(format === "csv" ? p.csv() : p.json(), "utf8") };
        env.cache.set(ck, hit);
      }
      return sendBody(res, format, def.endpoint, hit.body, hit.etag);
    }
    const p = r.build();
    const body = Buffer.from(format === "csv" ? p.csv() : p.json(), "utf8");
    const etag = bodyEtag(body);
    if (etagMatches(inm, etag)) return sendNotModified(res, etag);
    return sendBody(res, format, def.endpoint, body, etag);
  };
}

export function mountRoutes(router: Router, routes: AnyRoute[], env: RouteEnv): void {
  for (const def of routes) router.get(def.path, handler(def, env));
}

/** Upper-cased ticker path parameter. */
export const tickerOf = (ctx: { path: Record<string, string> }) => String(ctx.path.ticker ?? "").toUpperCase();

/** Page of a list. */
export const page = <T>(list: T[], offset: number, limit: number) => list.slice(offset, offset + limit);
