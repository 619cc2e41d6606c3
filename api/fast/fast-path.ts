// The node:http fast path: the server's `request` listener asks it first (api/server.ts), and it
// answers a GET or HEAD whose whole answer is in the response cache (answer-cache.ts) without
// Express, doing everything the Express path does for it in the same order: failed-auth throttle,
// key lookup (the catalog's map of presented keys), the cache lookup by snapshot, normalised
// request and the key's scope set, the route's scopes, the rate limit (and for GraphQL the cost
// budget), then the access-log line and metrics, security headers, CORS, ETag / If-None-Match → 304.
// Whatever it cannot answer from the cache, or would refuse, goes to Express untouched (a refusal
// is then counted once, by Express); a REST miss on a shareable route is watched so that its
// answer fills the cache.
// Per request it does little besides: cache keys are remembered per raw URL (request-keys.ts), each answer's
// header block is built once per encoding (header-blocks.ts), and an in-memory rate limit counts in the
// same turn (rate-limit.ts `now`), so a hit costs no promise and no closure.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { CatalogReader } from "../../pipeline/store/catalog/types.ts";
import { type Caller, hasScopes } from "../auth.ts";
import type { AuthGuard } from "../auth-failures.ts";
import { clientAddress } from "../client-address.ts";
import { type ApiError, toApiError } from "../errors.ts";
import { knownCaller } from "../gate.ts";
import { CostBudgetSpent } from "../graphql/errors.ts";
import { sendErrors } from "../graphql/http-edges.ts";
import { type AnswerCache, type GraphqlAnswer, type RestAnswer, scopeSet } from "../output/answer-cache.ts";
import { codingFor } from "../output/compress.ts";
import { etagMatches } from "../output/etag.ts";
import type { CostBudget, CostSpent, Limiter, RateHeaders } from "../rate-limit.ts";
import { type SnapshotRef, snapshotId } from "../resources/snapshot-access.ts";
import { REST_PREFIX } from "../rest/dispatch.ts";
import type { HeaderSet } from "../security-headers.ts";
import { SHAREABLE_SEGMENTS, watchForFill } from "./cache-fill.ts";
import { FAST_HEADER, graphqlHead, type Heads, newHeads, restHead } from "./header-blocks.ts";
import { PersistedKeys, RestKeys } from "./request-keys.ts";

export { FAST_HEADER } from "./header-blocks.ts";

type Next = () => void;
type Res = ServerResponse & { locals: Record<string, unknown> };

export interface FastEnv {
  snapshot: () => SnapshotRef | null;
  catalog: CatalogReader;
  answers: AnswerCache;
  limiter: Limiter | null;
  authGuard: AuthGuard | null;
  /** Proxy hops whose X-Forwarded-For entry names the client (api/client-address.ts); 0: the socket's peer. */
  trustProxy: number;
  costBudget: CostBudget;
  /**
   * Starts the access-log record and metrics of a request (api/access-log.ts); `idInHead`: the
   * caller writes X-Request-Id in its own writeHead.
   */
  observe: (req: IncomingMessage, res: ServerResponse, idInHead?: boolean) => void;
  /** Security headers (and Vary: Origin when CORS answers depend on it). */
  baseHeaders: HeaderSet;
  /** The app's CORS middleware, applied when the request sends Origin. */
  cors: ((req: IncomingMessage, res: ServerResponse, next: Next) => void) | null;
}

/** Answers `req` and returns true, or returns false having touched nothing (Express then serves it). */
export type FastPath = (req: IncomingMessage, res: ServerResponse) => boolean;

/** One fast path: its env and what it keeps between requests. */
interface Fast {
  env: FastEnv;
  heads: Heads;
  restKeys: RestKeys;
  persistedKeys: PersistedKeys;
}

/** A hit being answered, kept on the response (no closure per request for CORS's continuation). */
interface Hit {
  fast: Fast;
  req: IncomingMessage;
  caller: Caller;
  rest: RestAnswer | undefined;
  graphql: GraphqlAnswer | undefined;
  mediaType: string;
}

const GRAPHQL_GET = "/graphiql?";

export function createFastPath(env: FastEnv): FastPath {
  const fast: Fast = {
    env,
    heads: newHeads(env.baseHeaders),
    restKeys: new RestKeys(),
    persistedKeys: new PersistedKeys(),
  };
  return (req, res) => route(fast, req, res);
}

function route(fast: Fast, req: IncomingMessage, res: ServerResponse): boolean {
  const m = req.method;
  if (m !== "GET" && m !== "HEAD") return false;
  const url = req.url ?? "";
  const isRest = url.startsWith(REST_PREFIX) && url.charCodeAt(REST_PREFIX.length) === 47; // "/"
  if (!isRest && !(m === "GET" && fast.env.answers.size > 0 && url.startsWith(GRAPHQL_GET))) return false;
  const snapshot = fast.env.snapshot();
  if (snapshot === null) return false;
  const sid = snapshotId(snapshot);
  return isRest ? rest(fast, req, res, url, sid) : graphql(fast, req, res, url, sid);
}

/** The caller of a presented key through the gate (api/gate.ts, knownCaller); null: Express answers (401, 429). */
function callerOf(env: FastEnv, req: IncomingMessage, key: string | undefined): Caller | null {
  // no header work for the address unless failed authentications are throttled
  return knownCaller(env, { key, address: env.authGuard === null ? undefined : clientAddress(req, env.trustProxy) });
}

function rest(fast: Fast, req: IncomingMessage, res: ServerResponse, url: string, sid: string): boolean {
  if (!SHAREABLE_SEGMENTS.has(firstSegment(url))) return false; // never cached: Express, untouched
  const k = fast.restKeys.of(url);
  if (k === null) return false;
  const h = req.headers.api_key;
  const caller = callerOf(fast.env, req, k.queryKey ?? (typeof h === "string" && h !== "" ? h : undefined));
  if (caller === null) return false;
  const key = k.cacheKey(scopeSet(caller.key.scopes));
  const a = fast.env.answers.get(sid, key);
  if (a === undefined || a.kind !== "rest") {
    watchForFill(req, res, fast.env, sid, key);
    return false;
  }
  if (!hasScopes(caller, a.scopes)) return false; // Express answers the 403 (and counts the request)
  take(fast, req, res, a.route, { fast, req, caller, rest: a, graphql: undefined, mediaType: "" });
  return true;
}

function graphql(fast: Fast, req: IncomingMessage, res: ServerResponse, url: string, sid: string): boolean {
  const h = req.headers.api_key;
  const caller = callerOf(fast.env, req, typeof h === "string" && h !== "" ? h : undefined);
  if (caller === null) return false;
  const k = fast.persistedKeys.of(url, req.headers.accept, scopeSet(caller.key.scopes));
  const a = k === null ? undefined : fast.env.answers.get(sid, k.key);
  if (a === undefined || a.kind !== "graphql") return false;
  take(fast, req, res, "graphql", { fast, req, caller, rest: undefined, graphql: a, mediaType: k!.mediaType });
  return true;
}

/** Takes the request: the access-log record (request id, line, metrics), then CORS, then the answer. */
function take(fast: Fast, req: IncomingMessage, res: ServerResponse, route: string, hit: Hit): void {
  (res as Res).locals = { route };
  fast.env.observe(req, res, true);
  fast.env.answers.fastServed++;
  if (fast.env.cors !== null && req.headers.origin !== undefined) fast.env.cors(req, res, () => answer(hit, res));
  else answer(hit, res);
}

/** The rate limit (and for GraphQL the cost budget), then the answer; in this turn when the limits are in memory. */
function answer(hit: Hit, res: ServerResponse): void {
  const limiter = hit.fast.env.limiter;
  if (limiter === null) spend(hit, res, undefined);
  else if (limiter.now !== undefined) {
    let rate: RateHeaders | undefined;
    try {
      rate = limiter.now(hit.caller.key.id);
    } catch (e) {
      refuse(hit, res, toApiError(e));
    }
    if (rate !== undefined) spend(hit, res, rate);
  } else
    limiter(hit.caller.key.id)
      .then(
        (rate) => spend(hit, res, rate),
        (e: unknown) => refuse(hit, res, toApiError(e)),
      )
      .catch(() => res.destroy()); // a write that failed: the connection is gone or broken
}

/** GraphQL's cost budget, then the answer (a REST answer is sent at once). */
function spend(hit: Hit, res: ServerResponse, rate: RateHeaders | undefined): void {
  if (hit.rest !== undefined) sendRest(hit, res, hit.rest, rate);
  else {
    const budget = hit.fast.env.costBudget;
    const cost = hit.graphql!.cost;
    if (budget.now !== undefined) spent(hit, res, budget.now(hit.caller.key.id, cost), rate);
    else
      budget(hit.caller.key.id, cost)
        .then((s) => spent(hit, res, s, rate))
        .catch(() => res.destroy());
  }
}

function spent(hit: Hit, res: ServerResponse, s: CostSpent, rate: RateHeaders | undefined): void {
  if (s.refused) refuse(hit, res, new CostBudgetSpent(s.report));
  else sendGraphql(hit, res, hit.graphql!, s, rate);
}

/** A refusal the fast path made itself (rate limit, cost budget): the body Express's would be. */
function refuse(hit: Hit, res: ServerResponse, e: ApiError): void {
  const { baseHeaders } = hit.fast.env;
  if (hit.graphql !== undefined) {
    for (const name in baseHeaders) res.setHeader(name, baseHeaders[name]);
    sendErrors(res, e);
    return;
  }
  res.writeHead(e.status, {
    ...baseHeaders,
    ...e.headers,
    "X-Request-Id": (res as Res).locals.requestId as string,
    "Content-Type": "application/json; charset=utf-8",
    "Cache-Control": "no-store",
  });
  res.end(JSON.stringify(e.toBody()));
}

function sendRest(hit: Hit, res: ServerResponse, a: RestAnswer, rate: RateHeaders | undefined): void {
  const id = (res as Res).locals.requestId as string;
  const req = hit.req;
  if (etagMatches(req.headers["if-none-match"], a.etag)) {
    res.writeHead(304, {
      ETag: a.etag,
      "Cache-Control": a.headers["Cache-Control"],
      "X-Request-Id": id,
      ...hit.fast.env.baseHeaders,
      ...rate,
      [FAST_HEADER]: "hit",
    });
    res.end();
    return;
  }
  const coding = codingFor(req, a.body.length);
  const body = (coding === null ? undefined : a[coding]) ?? a.body;
  res.writeHead(200, restHead(hit.fast.heads, a, body === a.body ? null : coding, id, rate));
  res.end(body);
}

function sendGraphql(hit: Hit, res: ServerResponse, a: GraphqlAnswer, s: CostSpent, rate: RateHeaders | undefined) {
  // the cached body without its closing brace, then the request's cost report: two writes, one
  // writev (corked), and no copy of the body
  const r = s.report;
  // numbers (finite: a count and a limit) and an ISO date: as JSON.stringify writes them, without it
  const tail = `${costHead(a, r)}${r.remaining},"resetAt":"${r.resetAt}"}}}`;
  const id = (res as Res).locals.requestId as string;
  res.writeHead(200, graphqlHead(hit.fast.heads, a, hit.mediaType, a.body.length - 1 + tail.length, id, rate));
  res.cork();
  res.write(a.body.subarray(0, -1));
  res.end(tail, "latin1"); // end uncorks; the tail is ASCII (numbers and an ISO date)
}

/** The cost report's opening up to `remaining`, the same for every request of an answer under one limit. */
function costHead(a: GraphqlAnswer, r: CostSpent["report"]): string {
  if (a.costHead === undefined || a.costHead.requested !== r.requested || a.costHead.limit !== r.limit)
    a.costHead = {
      requested: r.requested,
      limit: r.limit,
      text: `,"extensions":{"cost":{"requested":${r.requested},"limit":${r.limit},"remaining":`,
    };
  return a.costHead.text;
}

/** The first path segment under /data/v1/ (the URL is known to start with it). */
function firstSegment(url: string): string {
  const from = REST_PREFIX.length + 1;
  let to = from;
  while (to < url.length) {
    const c = url.charCodeAt(to);
    if (c === 47 /* / */ || c === 63 /* ? */) break;
    to++;
  }
  return url.slice(from, to);
}
