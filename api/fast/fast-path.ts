// The node:http fast path: the server's `request` listener asks it first (api/server.ts), and it
// answers a GET or HEAD whose whole answer is in the response cache (answer-cache.ts) without
// Express, doing everything the Express path does for it in the same order: failed-auth throttle,
// key lookup (the catalog's map of presented keys), the cache lookup by snapshot, normalised
// request and the key's scope set, the route's scopes, the rate limit (and for GraphQL the cost
// budget), then the access-log line and metrics, security headers, CORS, ETag / If-None-Match → 304.
// Whatever it cannot answer from the cache, or would refuse, goes to Express untouched (a refusal
// is then counted once, by Express); a REST miss on a shareable route is watched so that its
// answer fills the cache.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { CatalogReader } from "../../pipeline/store/catalog/types.ts";
import { findCaller, hasScopes } from "../auth.ts";
import type { AuthGuard } from "../auth-failures.ts";
import { type ApiError, toApiError } from "../errors.ts";
import { answeredMediaType } from "../graphql/cache.ts";
import { CostBudgetSpent } from "../graphql/errors.ts";
import { sendErrors } from "../graphql/http.ts";
import { codingFor } from "../output/compress.ts";
import { etagMatches } from "../output/etag.ts";
import type { CostBudget, Limiter, RateHeaders } from "../rate-limit.ts";
import { type SnapshotRef, snapshotId } from "../resources/snapshot-access.ts";
import { REST_PREFIX } from "../rest/dispatch.ts";
import type { HeaderSet } from "../security-headers.ts";
import { type AnswerCache, type GraphqlAnswer, type RestAnswer, scopeSet } from "./answer-cache.ts";
import { SHAREABLE_SEGMENTS, watchForFill } from "./fill.ts";
import { persistedGetKey, restRequestKey } from "./keys.ts";

/** Marks an answer the fast path wrote (tests and operators tell the two paths apart by it). */
export const FAST_HEADER = "X-Response-Cache";

type Next = () => void;
type Res = ServerResponse & { locals: Record<string, unknown> };

export interface FastEnv {
  snapshot: () => SnapshotRef | null;
  catalog: CatalogReader;
  answers: AnswerCache;
  limiter: Limiter | null;
  authGuard: AuthGuard | null;
  costBudget: CostBudget;
  /** Starts the access-log record and metrics of a request (api/access-log.ts). */
  observe: (req: IncomingMessage, res: ServerResponse) => void;
  /** Security headers (and Vary: Origin when CORS answers depend on it). */
  baseHeaders: HeaderSet;
  /** The app's CORS middleware, applied when the request sends Origin. */
  cors: ((req: IncomingMessage, res: ServerResponse, next: Next) => void) | null;
}

/** Answers `req` and returns true, or returns false having touched nothing (Express then serves it). */
export type FastPath = (req: IncomingMessage, res: ServerResponse) => boolean;

const GRAPHQL_GET = "/graphiql?";

// One closure over `env` holding the fast path's small steps (each well under 60 lines): they share it.
export function createFastPath(env: FastEnv): FastPath {
  const { answers } = env;

  /** Takes the request: the access-log record (request id, line, metrics), then CORS, then `go`. */
  function take(req: IncomingMessage, res: ServerResponse, route: string, go: Next): void {
    const r = res as Res;
    r.locals = { route };
    env.observe(req, res);
    answers.fastServed++;
    if (env.cors !== null && req.headers.origin !== undefined) env.cors(req, res, go);
    else go();
  }

  /** A refusal the fast path made itself (the rate limit it counted): the body Express's would be. */
  function refuse(res: ServerResponse, e: ApiError): void {
    const r = res as Res;
    res.writeHead(e.status, {
      ...env.baseHeaders,
      ...e.headers,
      "X-Request-Id": r.locals.requestId as string,
      "Content-Type": "application/json; charset=utf-8",
      "Cache-Control": "no-store",
    });
    res.end(JSON.stringify(e.toBody()));
  }

  function sendRest(req: IncomingMessage, res: ServerResponse, a: RestAnswer, rate: RateHeaders | undefined): void {
    const id = (res as Res).locals.requestId as string;
    if (etagMatches(req.headers["if-none-match"], a.etag)) {
      res.writeHead(304, {
        ETag: a.etag,
        "Cache-Control": a.headers["Cache-Control"],
        "X-Request-Id": id,
        ...env.baseHeaders,
        ...rate,
        [FAST_HEADER]: "hit",
      });
      res.end();
      return;
    }
    const headers: Record<string, string | number> = { ...a.headers, "X-Request-Id": id, [FAST_HEADER]: "hit" };
    if (rate) Object.assign(headers, rate);
    const coding = codingFor(req, a.body.length);
    const form = coding === null ? undefined : a[coding];
    if (form !== undefined) headers["Content-Encoding"] = coding as string;
    const out = form ?? a.body;
    headers["Content-Length"] = out.length;
    res.writeHead(200, headers);
    res.end(out);
  }

  function rest(req: IncomingMessage, res: ServerResponse, url: string, sid: string): boolean {
    if (!SHAREABLE_SEGMENTS.has(firstSegment(url))) return false; // never cached: Express, untouched
    const k = restRequestKey(url);
    if (k === null) return false;
    const h = req.headers.api_key;
    const presented = k.queryKey ?? (typeof h === "string" && h !== "" ? h : undefined);
    if (presented === undefined) return false;
    if (!passesGuard(env.authGuard, req)) return false;
    const caller = findCaller(presented, env.catalog);
    if (caller === null) return false;
    const key = `r\u0000${scopeSet(caller.key.scopes)}\u0000${k.norm}`;
    const a = answers.get(sid, key);
    if (a === undefined || a.kind !== "rest") {
      watchForFill(req, res, env, sid, key);
      return false;
    }
    if (!hasScopes(caller, a.scopes)) return false; // Express answers the 403 (and counts the request)
    take(req, res, a.route, () => {
      if (env.limiter === null) return sendRest(req, res, a, undefined);
      env
        .limiter(caller.key.id)
        .then(
          (rate) => sendRest(req, res, a, rate),
          (e: unknown) => refuse(res, toApiError(e)),
        )
        .catch(() => res.destroy()); // a write that failed: the connection is gone or broken
    });
    return true;
  }

  function graphql(req: IncomingMessage, res: ServerResponse, url: string, sid: string): boolean {
    const h = req.headers.api_key;
    if (typeof h !== "string" || h === "") return false;
    if (!passesGuard(env.authGuard, req)) return false;
    const caller = findCaller(h, env.catalog);
    if (caller === null) return false;
    const key = persistedGetKey(url, req.headers.accept, scopeSet(caller.key.scopes));
    const a = key === null ? undefined : answers.get(sid, key);
    if (a === undefined || a.kind !== "graphql") return false;
    take(req, res, "graphql", () => {
      const fail = (e: unknown) => {
        for (const name in env.baseHeaders) res.setHeader(name, env.baseHeaders[name]);
        sendErrors(res, toApiError(e));
      };
      const limited = env.limiter === null ? Promise.resolve(undefined) : env.limiter(caller.key.id);
      limited
        .then(
          (rate) =>
            env.costBudget(caller.key.id, a.cost).then(({ report, refused }) => {
              if (refused) return fail(new CostBudgetSpent(report));
              sendGraphql(req, res, a, report, rate);
            }),
          fail,
        )
        .catch(() => res.destroy()); // a write that failed: the connection is gone or broken
    });
    return true;
  }

  function sendGraphql(
    req: IncomingMessage,
    res: ServerResponse,
    a: GraphqlAnswer,
    report: object,
    rate: RateHeaders | undefined,
  ): void {
    // the cached body without its closing brace, then the request's cost report: two writes, one
    // writev (corked), and no copy of the body
    const head = a.body.subarray(0, -1);
    const tail = Buffer.from(`,"extensions":${JSON.stringify({ cost: report })}}`);
    const type = answeredMediaType(req.headers.accept) ?? "application/json";
    res.writeHead(200, {
      ...env.baseHeaders,
      ...rate,
      "Content-Type": `${type}; charset=utf-8`,
      "Content-Length": head.length + tail.length,
      "Cache-Control": "no-store",
      "X-Request-Id": (res as Res).locals.requestId as string,
      [FAST_HEADER]: "hit",
    });
    res.cork();
    res.write(head);
    res.end(tail); // end uncorks
  }

  return (req, res) => {
    const m = req.method;
    if (m !== "GET" && m !== "HEAD") return false;
    const url = req.url ?? "";
    const isRest = url.startsWith(REST_PREFIX) && url.charCodeAt(REST_PREFIX.length) === 47; // "/"
    if (!isRest && !(m === "GET" && answers.size > 0 && url.startsWith(GRAPHQL_GET))) return false;
    const snapshot = env.snapshot();
    if (snapshot === null) return false;
    const sid = snapshotId(snapshot);
    return isRest ? rest(req, res, url, sid) : graphql(req, res, url, sid);
  };
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

/** The failed-auth throttle: a blocked address is left to Express, which answers its 429. */
function passesGuard(guard: AuthGuard | null, req: IncomingMessage): boolean {
  if (guard === null) return true;
  try {
    guard.check(req.socket.remoteAddress);
    return true;
  } catch {
    return false;
  }
}
