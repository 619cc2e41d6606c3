// The one request pipeline every REST endpoint runs through: snapshot read once, key, rate limit,
// scopes, 503, parameters (zod → 400), the route's resolve (404s, semantic 400s), then the body
// from the per-snapshot LRU or built once, with ETag / If-None-Match.
import type { Request, Response } from "express";
import type { z } from "zod";
import type { CatalogReader, Scope } from "../../pipeline/store/catalog/types.ts";
import { requestId } from "../access-log.ts";
import { type Caller, ENDPOINT_SCOPES, type EndpointName, presentedKey, queryKey } from "../auth.ts";
import type { AuthGuard } from "../auth-failures.ts";
import { clientAddress } from "../client-address.ts";
import { Unavailable } from "../errors.ts";
import { admit } from "../gate.ts";
import { bodyEtag, etagMatches, requestEtag } from "../output/etag.ts";
import type { BodyCache } from "../output/lru.ts";
import { type Format, type Payload, sendBody, sendNotModified } from "../output/payload.ts";
import type { Limiter, RateHeaders } from "../rate-limit.ts";
import type { ReadContext } from "../resources/context.ts";
import { type SnapshotRef, snapshotId } from "../resources/snapshot-access.ts";
import { controlIn } from "../resources/text-input.ts";
import type { DispatchEntry, PathHandler } from "./dispatch.ts";
import { type PageWindow, pageWindow, pagingHeaders } from "./paging.ts";
import { formatParam, invalidFromZod } from "./params.ts";

/** The resource readers' context, plus the route's validated parameters and path parameters. */
export interface RouteContext<P> extends ReadContext {
  params: P;
  path: Record<string, string>;
}

export interface Resolved {
  /**
   * Cache key when the body depends only on the snapshot and this key (normalized request).
   * Omitted for bodies that read the mutable catalog: those are built per request and tagged by content.
   */
  key?: string;
  build(): Payload | Promise<Payload>;
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
  /** Lookups that decide 404s and semantic 400s; the body's own reads happen in build(). */
  resolve(ctx: RouteContext<z.output<S>>): Promise<Resolved>;
}

// biome-ignore lint/suspicious/noExplicitAny: any route, whatever its schema (no wider type fits resolve)
export type AnyRoute = RouteDef<any>;
export const defineRoute = <S extends z.ZodObject>(def: RouteDef<S>): AnyRoute => def as AnyRoute;

export interface RouteEnv {
  snapshot: () => SnapshotRef | null;
  catalog: CatalogReader;
  limiter: Limiter | null;
  /** Failed authentications per client address; null: not limited. */
  authGuard?: AuthGuard | null;
  /** Proxy hops whose X-Forwarded-For entry names the client (api/client-address.ts); default 0. */
  trustProxy?: number;
  cache: BodyCache;
}

export const withFormat = (q: z.ZodObject) => q.extend({ format: formatParam });

function serialize(payload: Payload, format: Format): Buffer {
  if (format === "arrow") {
    const bytes = payload.arrow();
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }
  return Buffer.from(format === "csv" ? payload.csv() : payload.json(), "utf8");
}

/** A raw query string validated once: its api_key parameter, the format and the route's params. */
type Parsed = { queryKey: string | null | undefined; format: Format; params: Record<string, unknown> };

/** Where and how a route's body goes: the request (for If-None-Match) and its response. */
interface Reply {
  req: Request;
  res: Response;
  format: Format;
  endpoint: EndpointName;
  rate?: RateHeaders;
  /** The page asked, on a paged list (X-Total-Count and Link go with its body). */
  page: PageWindow | null;
}

/** The rate headers, and a paged list's headers when the body has its total. */
function extraHeaders(to: Reply, total: number | undefined): Record<string, string> | undefined {
  if (total === undefined || to.page === null) return to.rate;
  return { ...to.rate, ...pagingHeaders(to.req.url, to.page, total) };
}

function handler(def: AnyRoute, env: RouteEnv): PathHandler {
  const schema = withFormat(def.query);
  const scopes = ENDPOINT_SCOPES[def.endpoint];
  // Validated parameters per raw query string (bounded): a repeated read skips query parsing and
  // zod. A header key is read per request, since it is not part of the query string.
  const parsedCache = new Map<string, Parsed>();

  async function serve(
    req: Request,
    res: Response,
    snapshot: SnapshotRef | null,
    caller: Caller,
    p: Parsed | ZodInvalid,
    path: Record<string, string>,
    rate?: RateHeaders,
  ): Promise<void> {
    if (!snapshot) throw new Unavailable();
    if (p instanceof ZodInvalid) throw invalidFromZod(p.issues);
    const r = await def.resolve({ snapshot, caller, catalog: env.catalog, params: p.params, path });
    const reply: Reply = { req, res, format: p.format, endpoint: def.endpoint, rate, page: pageWindow(p.params) };
    if (r.key === undefined) return sendBuilt(r, reply);
    const sid = snapshotId(snapshot);
    return sendShared(env.cache, sid, `${sid}|${p.format}|${def.id}|${r.key}`, r, reply);
  }

  // Checks run in a fixed order: key (401), rate limit (429), scopes (403), snapshot (503), then
  // parameters (400) and the route's own 404s.
  return (req, res, path) => {
    const snapshot = env.snapshot(); // read once: a swap mid-request never mixes two snapshots
    res.locals.route = def.id;
    const p = parsedQuery(req, schema, parsedCache);
    const go = (caller: Caller, rate?: RateHeaders) => serve(req, res, snapshot, caller, p, path, rate);
    return gated(req, res, env, p.queryKey, go, scopes);
  };
}

/** The request's query validated by `schema`, from `parsedCache` when the raw query string was seen before. */
function parsedQuery(req: Request, schema: z.ZodObject, parsedCache: Map<string, Parsed>): Parsed | ZodInvalid {
  const url = req.url;
  const q = url.indexOf("?");
  const raw = q < 0 ? "" : url.slice(q + 1);
  const cached = parsedCache.get(raw);
  if (cached) return cached;
  const query = req.query as Record<string, unknown>; // Express 5 parses on every access: once here
  const parsed = checkQuery(query, schema);
  if (!parsed.success) return new ZodInvalid(parsed.issues, queryKey(query));
  const { format, ...params } = parsed.data as { format: Format } & Record<string, unknown>;
  const p = { queryKey: queryKey(query), format, params };
  if (parsedCache.size >= 1000) parsedCache.clear();
  if (raw.length <= 2048) parsedCache.set(raw, p);
  return p;
}

/** A body that depends only on the snapshot and the request: from the body cache, or built once and kept. */
async function sendShared(cache: BodyCache, sid: string, ck: string, r: Resolved, to: Reply): Promise<void> {
  const { res, format, rate } = to;
  const inm = to.req.headers["if-none-match"];
  const id = requestId(res);
  let hit = cache.get(ck);
  const etag = hit?.etag ?? requestEtag(sid, ck);
  if (etagMatches(inm, etag)) return sendNotModified(res, etag, id, rate);
  if (!hit) {
    const payload = await r.build();
    hit = { etag, body: serialize(payload, format), total: payload.total };
    cache.set(ck, hit);
  }
  res.locals.cacheableBody = hit.body; // the fast path's response cache may keep it (api/fast/cache-fill.ts)
  return sendBody(res, format, to.endpoint, hit.body, hit.etag, id, extraHeaders(to, hit.total));
}

/** A body built per request (it reads the mutable catalog), tagged by its content. */
async function sendBuilt(r: Resolved, to: Reply): Promise<void> {
  const { res, format, rate } = to;
  const inm = to.req.headers["if-none-match"];
  const id = requestId(res);
  const payload = await r.build();
  const body = serialize(payload, format);
  const etag = bodyEtag(body);
  if (etagMatches(inm, etag)) return sendNotModified(res, etag, id, rate);
  return sendBody(res, format, to.endpoint, body, etag, id, extraHeaders(to, payload.total));
}

/**
 * The request through the gate (api/gate.ts: the failed-auth throttle, the key, the rate limit, and
 * `scopes` when given); `serve` runs with the caller and the rate headers, which its errors and a
 * refusal after the rate limit carry too.
 */
export async function gated(
  req: Request,
  res: Response,
  env: RouteEnv,
  fromQuery: string | null | undefined,
  serve: (caller: Caller, rate?: RateHeaders) => Promise<void>,
  scopes?: readonly Scope[],
): Promise<void> {
  // no header work for the address unless failed authentications are throttled
  const address = env.authGuard ? clientAddress(req, env.trustProxy ?? 0) : undefined;
  const a = await admit(env, { key: presentedKey(req, fromQuery), address, scopes });
  if (a.refusal) throw withRate(res, a.refusal, a.rate);
  return serve(a.caller, a.rate).catch((e: unknown) => {
    throw withRate(res, e, a.rate);
  });
}

/** `e`, the rate headers set on the response first (errors carry them too). */
function withRate(res: Response, e: unknown, rate: RateHeaders | undefined): unknown {
  if (rate && !res.headersSent) for (const [k, v] of Object.entries(rate)) res.setHeader(k, v);
  return e;
}

export type CheckedQuery<T> =
  | { success: true; data: T }
  | { success: false; issues: z.core.$ZodIssue[] /** refused for a control character */; control: boolean };

/**
 * A query checked as every route checks one: control characters (%00 …) in any parameter, known or
 * not, first and alone (a 400 naming the first; api/README.md), then parameters the schema does not
 * declare (a typo must not silently answer the default: a 400 naming each), then `schema`.
 */
export function checkQuery<S extends z.ZodType>(query: Record<string, unknown>, schema: S): CheckedQuery<z.infer<S>> {
  const bad = controlIn(query, "");
  if (bad) return { success: false, issues: [controlIssue(bad)], control: true };
  const unknown = unknownIssues(query, schema);
  const r = schema.safeParse(query);
  if (r.success && unknown.length === 0) return { success: true, data: r.data };
  return { success: false, issues: [...unknown, ...(r.success ? [] : r.error.issues)], control: false };
}

/** Parameters every request may carry whatever its route: the key, and the format (routes that take one declare it). */
const ALWAYS_KNOWN = new Set(["api_key", "format"]);

/** One issue per query parameter the route's schema does not declare (its object shape is the list of known ones). */
function unknownIssues(query: Record<string, unknown>, schema: z.ZodType): z.core.$ZodIssue[] {
  const shape = (schema as { shape?: Record<string, unknown> }).shape;
  if (!shape) return [];
  const unknown = Object.keys(query).filter((k) => !Object.hasOwn(shape, k) && !ALWAYS_KNOWN.has(k));
  if (unknown.length === 0) return [];
  const known = Object.keys(shape).filter((k) => k !== "format");
  const takes = known.length ? `this endpoint takes ${known.join(", ")}` : "this endpoint takes no parameters";
  return unknown.map((k) => ({
    code: "custom",
    path: [k],
    message: `unknown parameter (${takes}, besides api_key${Object.hasOwn(shape, "format") ? " and format" : ""})`,
    input: undefined,
  }));
}

/** A control character found in the query, as the zod issue of its (top-level) parameter. */
export const controlIssue = (bad: { param: string; message: string }): z.core.$ZodIssue => ({
  code: "custom",
  path: [bad.param.split(/[.[]/)[0]],
  message: bad.message,
  input: undefined,
});

/** Parameters that failed validation, kept until the checks that come before a 400 have run. */
class ZodInvalid {
  constructor(
    readonly issues: z.core.$ZodIssue[],
    readonly queryKey: string | null | undefined,
  ) {}
}

export function restEntries(routes: AnyRoute[], env: RouteEnv): DispatchEntry[] {
  return routes.map((def) => ({ path: def.path, handle: handler(def, env) }));
}

/** Upper-cased ticker path parameter. */
export const tickerOf = (ctx: { path: Record<string, string> }) => String(ctx.path.ticker ?? "").toUpperCase();

/** limit/offset query parameters as a page request. */
export const pageArgs = (p: { limit: number; offset: number }) => ({ offset: p.offset, limit: p.limit });

/** JSON text of an item object, kept while the object lives (snapshot-backed items are reused). */
const jsonMemo = new WeakMap<object, string>();
export function jsonOf(value: object): { value: object; json: string } {
  let json = jsonMemo.get(value);
  if (json === undefined) {
    json = JSON.stringify(value);
    jsonMemo.set(value, json);
  }
  return { value, json };
}
