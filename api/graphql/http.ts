// /graphiql: one address for every operation (contract §7, GraphQL over HTTP via graphql-http).
// A browser GET (Accept: text/html) gets the IDE; everything else is GraphQL: key (header
// api_key; absent or unknown → 401 with a GraphQL errors body), rate limit (429), snapshot (503),
// then graphql-http parses (token limit), pre-scans (size limits), validates (depth and cost
// limits), spends the query's cost from the key's budget per minute (429 when spent), and
// executes within a time limit; the answer is refused past a size limit, and carries the budget
// in `extensions.cost` (api/README.md, "GraphQL limits").
import type { ServerResponse } from "node:http";
import type { NextFunction, Request, RequestHandler, Response } from "express";
import { type ExecutionArgs, type ExecutionResult, GraphQLError } from "graphql";
import { createHandler, type Request as GraphqlHttpRequest, type ResponseInit } from "graphql-http";
import type pino from "pino";
import type { CatalogReader, CatalogWriter } from "../../pipeline/store/catalog/types.ts";
import { requestId } from "../access-log.ts";
import { authenticate, type Caller } from "../auth.ts";
import type { AuthGuard } from "../auth-failures.ts";
import { clientAddress } from "../client-address.ts";
import { ApiError, toApiError, Unauthorized } from "../errors.ts";
import { AnswerCache } from "../fast/answer-cache.ts";
import { type CostBudget, type CostReport, createCostBudget, type Limiter } from "../rate-limit.ts";
import { type SnapshotRef, snapshotId } from "../resources/snapshot-access.ts";
import {
  answeredMediaType,
  DocumentCache,
  type GraphqlParams,
  PersistedQueries,
  ResponseCache,
  requestParams,
  snapshotOnly,
} from "./cache.ts";
import { createContext, type GqlContext, type RequestRebalance } from "./context.ts";
import { COST_PER_MINUTE, MAX_RESPONSE_BYTES, TIMEOUT_MS } from "./cost.ts";
import { CostBudgetSpent, errorsBody, mapErrors } from "./errors.ts";
import { GRAPHQL_PATH, ideCsp, idePage, ideStatic, wantsIde } from "./ide.ts";
import { executeCompiled } from "./jit.ts";
import { type CostSink, costCapsOf, limitRules, MAX_COST } from "./limits.ts";
import type { WebhookPort } from "./mutations/webhook-port.ts";
import { graphqlSchema } from "./schema.ts";
import { stringifySliced } from "./serialize.ts";
import { TimeoutError } from "./turns.ts";

/** Limits of one request besides the document's size (prescan.ts) and depth (limits.ts). */
export interface GraphqlLimits {
  /** points of one request (cost.ts) */
  maxCost: number;
  /** execution time, ms: costly fields still waiting then are refused, the answer is data null + TIMEOUT */
  timeoutMs: number;
  /** bytes of one answer: past it, data null + RESPONSE_TOO_LARGE */
  maxResponseBytes: number;
}

export const GRAPHQL_LIMITS: GraphqlLimits = {
  maxCost: MAX_COST,
  timeoutMs: TIMEOUT_MS,
  maxResponseBytes: MAX_RESPONSE_BYTES,
};

export interface GraphqlEnv {
  snapshot: () => SnapshotRef | null;
  catalog: CatalogReader;
  /** Catalog writes for mutations; without it mutations answer an error. */
  writer?: CatalogWriter;
  /** Hands a changed portfolio's rebalance to the job runner. */
  requestRebalance?: RequestRebalance;
  /** Webhook subscriptions (api/graphql/mutations/webhooks.ts). */
  webhooks?: WebhookPort;
  limiter: Limiter | null;
  /** Failed authentications per client address, shared with REST (api/auth-failures.ts). */
  authGuard?: AuthGuard | null;
  /** Proxy hops whose X-Forwarded-For entry names the client (api/client-address.ts); default 0. */
  trustProxy?: number;
  logger: pino.Logger;
  /** Whole-response cache of snapshot-only queries (default on; the benchmark measures both). */
  responseCache?: boolean;
  /** The app's response cache (shared with REST and the fast path); default a cache of its own. */
  answers?: AnswerCache;
  /** The keys' cost budgets per minute (default COST_PER_MINUTE per key, in memory). */
  costBudget?: CostBudget;
  /** Overrides of GRAPHQL_LIMITS (tests and the limits benchmark). */
  limits?: Partial<GraphqlLimits>;
}

/** Largest request body accepted (a query document with variables). */
export const MAX_BODY = 256 * 1024;

/**
 * The request body as UTF-8 text, at most MAX_BODY bytes (null when larger). A plain reader:
 * graphql-http checks the content type itself, and body-parser's generality cost a measurable
 * share of a cached read.
 */
function readBody(req: Request): Promise<string | null> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY) chunks.push(c);
    });
    req.on("end", () =>
      resolve(
        size > MAX_BODY
          ? null
          : chunks.length === 1
            ? chunks[0].toString("utf8")
            : Buffer.concat(chunks).toString("utf8"),
      ),
    );
    req.on("error", reject);
  });
}

interface Prepared extends CostSink {
  caller: Caller;
  snapshot: SnapshotRef;
  /** the key's budget after this request's cost was spent */
  report?: CostReport;
  /** response cache key when the request may be answered from (or stored into) the cache */
  cacheKey?: string | null;
  mediaType?: string | null;
}

/** A JSON body with `extensions.cost` added (the body is an object: `{...}`). */
function withCost(json: string, report: CostReport | undefined): string {
  return report ? `${json.slice(0, -1)},"extensions":${JSON.stringify({ cost: report })}}` : json;
}

/** A refusal with a GraphQL error code of its own (the persisted-query protocol's). */
export class GraphqlRefusal extends ApiError {
  constructor(
    status: number,
    readonly graphqlCode: string,
    message: string,
  ) {
    super(status, status === 404 ? "not_found" : "invalid_parameter", message);
  }
}

export function sendErrors(res: ServerResponse, e: ApiError): void {
  const code =
    e instanceof GraphqlRefusal
      ? e.graphqlCode
      : e.status === 401
        ? "UNAUTHENTICATED"
        : e.status === 429
          ? "RATE_LIMITED"
          : e.status === 503
            ? "UNAVAILABLE"
            : e.status === 413
              ? "PAYLOAD_TOO_LARGE"
              : "BAD_REQUEST";
  res.writeHead(e.status, {
    ...e.headers,
    "Content-Type": "application/json; charset=utf-8",
    "Cache-Control": "no-store",
    "X-Request-Id": requestId(res as Response),
  });
  res.end(errorsBody(e.message, code, e instanceof CostBudgetSpent ? { cost: e.report } : {}));
}

/** Bodies of graphql-http's refusals that have none (405, 415), as every other refusal's. */
const EMPTY_REFUSALS: Record<number, [string, string]> = {
  405: ["METHOD_NOT_ALLOWED", "GraphQL is served on GET and POST only"],
  415: [
    "UNSUPPORTED_MEDIA_TYPE",
    "a POST body must be application/json (charset utf-8) holding query, variables and operationName",
  ],
};

/** One handler's state, shared by its steps below. */
interface Gql {
  env: GraphqlEnv;
  limits: GraphqlLimits;
  budget: CostBudget;
  prepared: WeakMap<Response, Prepared>;
  ofContext: WeakMap<object, Prepared>;
  documents: DocumentCache;
  responses: ResponseCache | null;
  persisted: PersistedQueries;
  handle: ReturnType<typeof createHandler<Request, { res: Response }, Record<string, unknown>>>;
}

export function graphqlHandler(env: GraphqlEnv): RequestHandler {
  const g = {
    env,
    limits: { ...GRAPHQL_LIMITS, ...env.limits },
    budget: env.costBudget ?? createCostBudget({ points: COST_PER_MINUTE, durationSec: 60 }),
    prepared: new WeakMap<Response, Prepared>(),
    ofContext: new WeakMap<object, Prepared>(),
    documents: new DocumentCache(),
    responses: env.responseCache === false ? null : new ResponseCache(env.answers ?? new AnswerCache()),
    persisted: new PersistedQueries(),
  } as Gql;
  g.handle = createGraphqlHttp(g);
  return (req: Request, res: Response, next: NextFunction) => serve(g, req, res, next);
}

/**
 * graphql-http's handler with our own adapter: the body is read (bounded) before it runs, and an
 * empty body is an empty string (the stock Express adapter would wait for the stream again).
 */
function createGraphqlHttp(g: Gql): Gql["handle"] {
  const { env, documents } = g;
  return createHandler<Request, { res: Response }, Record<string, unknown>>({
    schema: graphqlSchema(),
    context: (req) => {
      const p = g.prepared.get(req.context.res)!;
      const ctx: GqlContext = createContext(
        { snapshot: p.snapshot, catalog: env.catalog, caller: p.caller },
        env.writer ?? null,
        env.requestRebalance ?? null,
      );
      ctx.webhooks = env.webhooks ?? null;
      g.ofContext.set(ctx, p);
      return ctx as unknown as Record<string, unknown>;
    },
    parse: documents.parse,
    execute: (args) => executeLimited(g, args),
    validate: documents.validate,
    validationRules: (req, args, specified) => {
      const p = g.prepared.get(req.context.res)!;
      const caps = costCapsOf(args.document, () => env.catalog.watchlistsOf(p.caller.user.id).length);
      const vars = args.variableValues ?? undefined;
      const rules = limitRules(vars, args.operationName ?? undefined, p, g.limits.maxCost, caps);
      return documents.tag([...specified, ...rules], vars, args.operationName, p, String(caps.watchlists));
    },
    // graphql-http's words for "which operation?" say nothing of operationName; these do
    formatError: (e) =>
      e.message === "Unable to detect operation AST"
        ? new GraphQLError(
            "the document holds several operations (or none with the given operationName): name " +
              "the one to run in operationName",
          )
        : e,
    // serialized here (not by graphql-http) to bound its size and add extensions.cost
    onOperation: (req, args, result) => answerOf(g, req, args, result as ExecutionResult),
  });
}

/** An operation's answer: mapped errors, the size limit, the response cache filled, extensions.cost added. */
async function answerOf(
  g: Gql,
  req: GraphqlHttpRequest<Request, { res: Response }>,
  args: ExecutionArgs,
  result: ExecutionResult,
): Promise<[string, ResponseInit]> {
  const { limits } = g;
  const mapped = mapErrors(result, g.env.logger, requestId(req.context.res));
  const p = g.prepared.get(req.context.res)!;
  let json = await stringifySliced(mapped);
  const bytes = Buffer.byteLength(json);
  if (bytes > limits.maxResponseBytes)
    json = JSON.stringify({
      data: null,
      errors: [
        new GraphQLError(
          `the answer is ${bytes} bytes, over the limit of ${limits.maxResponseBytes}: ` +
            "ask for fewer nodes or fields",
          { extensions: { code: "RESPONSE_TOO_LARGE", maxBytes: limits.maxResponseBytes, bytes } },
        ),
      ],
    });
  else if (p.cacheKey && !mapped.errors?.length && snapshotOnly(args.document, args.operationName) && current(g, p))
    g.responses!.set(snapshotId(p.snapshot), p.cacheKey, json, p.cost ?? 0);
  const type = answeredMediaType(req.raw.headers.accept) ?? "application/json";
  return [
    withCost(json, p.report),
    { status: 200, statusText: "OK", headers: { "content-type": `${type}; charset=utf-8` } },
  ];
}

/** Whether the request's snapshot is still the served one (an answer of a swapped-out one is not kept). */
function current(g: Gql, p: Prepared): boolean {
  const now = g.env.snapshot();
  return now !== null && snapshotId(now) === snapshotId(p.snapshot);
}

/** Spends the query's cost from the key's budget, then executes it within the time limit. */
async function executeLimited(g: Gql, args: ExecutionArgs): Promise<ExecutionResult> {
  const ctx = args.contextValue as GqlContext;
  const p = g.ofContext.get(ctx)!;
  const { report, refused } = await g.budget(p.caller.key.id, p.cost ?? 0);
  if (refused) throw new CostBudgetSpent(report);
  p.report = report;
  const { timeoutMs } = g.limits;
  ctx.deadline = { at: Date.now() + timeoutMs, timeoutMs };
  const run = executeCompiled(args);
  if (!(run instanceof Promise)) return run;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<ExecutionResult>((resolve) => {
    timer = setTimeout(() => resolve({ data: null, errors: [new TimeoutError(timeoutMs)] }), timeoutMs);
  });
  try {
    return await Promise.race([run, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Automatic persisted queries (Apollo's protocol): a query sent with its SHA-256 is kept under
 * it; a hash sent alone runs the kept query (404 PERSISTED_QUERY_NOT_FOUND when none is: the
 * client sends it again with the query). The request graphql-http reads then carries the text.
 */
function persistedQuery(g: Gql, req: Request, params: GraphqlParams): { url: string; body: string } | undefined {
  const { version, sha256Hash: hash } = params.persisted!;
  if (version !== 1)
    throw new GraphqlRefusal(400, "PERSISTED_QUERY_NOT_SUPPORTED", "unsupported persisted query version: 1 only");
  if (params.query !== undefined) {
    if (!g.persisted.register(hash, params.query))
      throw new GraphqlRefusal(400, "BAD_REQUEST", "provided sha does not match query");
    return undefined;
  }
  const text = g.persisted.get(hash);
  if (text === undefined) throw new GraphqlRefusal(404, "PERSISTED_QUERY_NOT_FOUND", "PersistedQueryNotFound");
  params.query = text;
  return req.method === "POST"
    ? { url: req.url, body: JSON.stringify({ ...JSON.parse(req.body as string), query: text }) }
    : { url: `${req.url}&query=${encodeURIComponent(text)}`, body: "" };
}

/**
 * Answers a snapshot-only query from the response cache (graphql-http's parsing, validation and
 * execution skipped; the cost still spent); false when the cache does not hold it. Sets the
 * request's cache key either way, for answerOf to fill.
 */
async function fromCache(g: Gql, req: Request, res: Response, p: Prepared, params: GraphqlParams): Promise<boolean> {
  const responses = g.responses!;
  p.mediaType = answeredMediaType(req.headers.accept);
  const doc = params.persisted ? `h:${params.persisted.sha256Hash}` : `q:${params.query}`;
  p.cacheKey =
    p.mediaType && responses.key(p.caller.key.scopes, p.mediaType, doc, params.operationName, params.variables);
  const hit = p.cacheKey ? responses.get(snapshotId(p.snapshot), p.cacheKey) : undefined;
  if (!hit) return false;
  const { report, refused } = await g.budget(p.caller.key.id, hit.cost);
  if (refused) throw new CostBudgetSpent(report);
  const body = Buffer.concat([
    hit.body.subarray(0, -1),
    Buffer.from(`,"extensions":${JSON.stringify({ cost: report })}}`),
  ]);
  res.writeHead(200, {
    "Content-Type": `${p.mediaType}; charset=utf-8`,
    "Content-Length": body.length,
    "Cache-Control": "no-store",
    "X-Request-Id": requestId(res),
  });
  res.end(body);
  return true;
}

/** The caller (401 through the failed-auth throttle when unknown), then the rate limit's headers. */
async function admit(g: Gql, req: Request, res: Response): Promise<Caller> {
  const { env } = g;
  const h = req.headers.api_key;
  const address = clientAddress(req, env.trustProxy ?? 0);
  env.authGuard?.check(address);
  let caller: Caller;
  try {
    caller = authenticate(typeof h === "string" && h !== "" ? h : undefined, env.catalog);
  } catch (e) {
    if (env.authGuard && e instanceof Unauthorized) return env.authGuard.fail(address, e);
    throw e;
  }
  const rate = env.limiter ? await env.limiter(caller.key.id) : undefined;
  if (rate) for (const [k, v] of Object.entries(rate)) res.setHeader(k, v);
  return caller;
}

async function run(g: Gql, req: Request, res: Response): Promise<void> {
  const snapshot = g.env.snapshot(); // read once: the whole operation reads one snapshot
  const caller = await admit(g, req, res);
  if (!snapshot)
    throw new ApiError(503, "unavailable", "no snapshot has been published yet", [], { "Retry-After": "5" });
  const p: Prepared = { caller, snapshot };
  g.prepared.set(res, p);
  const params = requestParams(
    req.method,
    req.headers["content-type"],
    req.body,
    req.method === "POST" ? {} : (req.query as Record<string, unknown>),
  );
  const apq = params?.persisted ? persistedQuery(g, req, params) : undefined;
  if (g.responses && params && (await fromCache(g, req, res, p, params))) return;
  res.setHeader("X-Request-Id", requestId(res));
  res.setHeader("Cache-Control", "no-store");
  const [body, init] = await g.handle({
    url: apq?.url ?? req.url,
    method: req.method,
    headers: req.headers,
    body: () => apq?.body ?? (typeof req.body === "string" ? req.body : ""),
    raw: req,
    context: { res },
  });
  const empty = body === null || body === "" ? EMPTY_REFUSALS[init.status] : undefined;
  if (empty)
    return void res
      .writeHead(init.status, init.statusText, { ...init.headers, "content-type": "application/json; charset=utf-8" })
      .end(errorsBody(empty[1], empty[0]));
  res.writeHead(init.status, init.statusText, init.headers).end(body);
}

/** /graphiql: the IDE and its files for a browser, GraphQL for everything else (POST bodies read first). */
function serve(g: Gql, req: Request, res: Response, next: NextFunction): void {
  res.locals.route = "graphql";
  const q = req.url.indexOf("?");
  const path = (q < 0 ? req.url : req.url.slice(0, q)).slice(GRAPHQL_PATH.length) || "/"; // after /graphiql
  if (path.startsWith("/static/")) return void ideStatic(req, res, next);
  if (path !== "/") {
    next();
    return;
  }
  if (req.method === "GET" && wantsIde(req.headers.accept) && !("query" in (req.query as object))) {
    const csp = res.getHeader("Content-Security-Policy");
    res.writeHead(200, {
      "Content-Type": "text/html; charset=utf-8",
      "X-Request-Id": requestId(res),
      ...(typeof csp === "string" ? { "Content-Security-Policy": ideCsp(csp) } : {}),
    });
    res.end(idePage());
    return;
  }
  if (req.method !== "POST") return void operate(g, req, res);
  readBody(req).then(
    (body) => {
      if (body === null)
        return sendErrors(
          res,
          new ApiError(413, "invalid_parameter", `request body larger than ${MAX_BODY / 1024} KiB`),
        );
      req.body = body;
      void operate(g, req, res);
    },
    () => sendErrors(res, new ApiError(400, "invalid_parameter", "unreadable request body")),
  );
}

/** Runs one GraphQL request; a failure is answered as a GraphQL errors body. */
function operate(g: Gql, req: Request, res: Response): Promise<void> {
  return run(g, req, res).catch((e: unknown) => {
    const err = toApiError(e);
    if (err.status >= 500 && err.code !== "unavailable")
      g.env.logger.error({ err: e, reqId: requestId(res) }, "graphql request failed");
    if (res.headersSent) return void res.destroy();
    sendErrors(res, err);
  });
}
