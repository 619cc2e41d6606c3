// /graphiql: one address for every operation (contract §7, GraphQL over HTTP via graphql-http).
// A browser GET (Accept: text/html) gets the IDE; everything else is GraphQL: the gate (api/gate.ts:
// key from the header api_key, absent or unknown → 401 with a GraphQL errors body; rate limit 429), snapshot (503),
// then graphql-http parses (token limit), pre-scans (size limits), validates (depth and cost
// limits), spends the query's cost from the key's budget per minute (429 when spent), and
// executes within a time limit; the answer is refused past a size limit, and carries the budget
// in `extensions.cost` (api/README.md, "GraphQL limits").
import type { NextFunction, Request, RequestHandler, Response } from "express";
import { type ExecutionArgs, type ExecutionResult, GraphQLError } from "graphql";
import { createHandler, type Request as GraphqlHttpRequest, type ResponseInit } from "graphql-http";
import type pino from "pino";
import type { CatalogReader, CatalogWriter } from "../../pipeline/store/catalog/types.ts";
import { requestId } from "../access-log.ts";
import type { Caller } from "../auth.ts";
import type { AuthGuard } from "../auth-failures.ts";
import { clientAddress } from "../client-address.ts";
import { ApiError, toApiError } from "../errors.ts";
import { admit } from "../gate.ts";
import { AnswerCache } from "../output/answer-cache.ts";
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
import { TimeoutError } from "./field-turns.ts";
import { EMPTY_REFUSALS, GraphqlRefusal, MAX_BODY, readBody, sendErrors } from "./http-edges.ts";
import { GRAPHQL_PATH, ideCsp, idePage, ideStatic, wantsIde } from "./ide.ts";
import { executeCompiled } from "./jit.ts";
import { type CostSink, costCapsOf, limitRules, MAX_COST } from "./limits.ts";
import type { WebhookPort } from "./mutations/webhook-port.ts";
import { graphqlSchema } from "./schema.ts";
import { stringifySliced } from "./serialize.ts";

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

/** What graphql-http carries of one request to our hooks: its response and what the checks before it prepared. */
interface RequestContext {
  res: Response;
  p: Prepared;
}

/** One handler's state, shared by its steps below. */
interface Gql {
  env: GraphqlEnv;
  limits: GraphqlLimits;
  budget: CostBudget;
  ofContext: WeakMap<object, Prepared>;
  documents: DocumentCache;
  responses: ResponseCache | null;
  persisted: PersistedQueries;
  handle: ReturnType<typeof createHandler<Request, RequestContext, Record<string, unknown>>>;
}

export function graphqlHandler(env: GraphqlEnv): RequestHandler {
  const g = {
    env,
    limits: { ...GRAPHQL_LIMITS, ...env.limits },
    budget: env.costBudget ?? createCostBudget({ points: COST_PER_MINUTE, durationSec: 60 }),
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
  return createHandler<Request, RequestContext, Record<string, unknown>>({
    schema: graphqlSchema(),
    context: (req) => {
      const { p } = req.context;
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
      const { p } = req.context;
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
  req: GraphqlHttpRequest<Request, RequestContext>,
  args: ExecutionArgs,
  result: ExecutionResult,
): Promise<[string, ResponseInit]> {
  const { limits } = g;
  const mapped = mapErrors(result, g.env.logger, requestId(req.context.res));
  const { p } = req.context;
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

/** The caller through the gate (api/gate.ts: the key from the api_key header), the rate limit's headers set. */
async function admitted(g: Gql, req: Request, res: Response): Promise<Caller> {
  const { env } = g;
  const h = req.headers.api_key;
  const key = typeof h === "string" && h !== "" ? h : undefined;
  const a = await admit(env, { key, address: clientAddress(req, env.trustProxy ?? 0) });
  if (a.refusal) throw a.refusal;
  if (a.rate) for (const [k, v] of Object.entries(a.rate)) res.setHeader(k, v);
  return a.caller;
}

async function run(g: Gql, req: Request, res: Response): Promise<void> {
  const snapshot = g.env.snapshot(); // read once: the whole operation reads one snapshot
  const caller = await admitted(g, req, res);
  if (!snapshot)
    throw new ApiError(503, "unavailable", "no snapshot has been published yet", [], { "Retry-After": "5" });
  const p: Prepared = { caller, snapshot };
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
    context: { res, p },
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
