// Errors in GraphQL responses. Resource readers throw the API's typed errors (status + code);
// here they become GraphQL errors with extensions {code, status, details}. Anything else is an
// opaque INTERNAL_SERVER_ERROR (the detail goes to the log, never to the caller).
import { type ExecutionResult, GraphQLError } from "graphql";
import type pino from "pino";
import { pipelineErrorCode } from "../../pipeline/domain/errors.ts";
import { ApiError, RateLimited, toApiError } from "../errors.ts";
import type { CostReport } from "../rate-limit.ts";

const CODES: Record<string, string> = {
  invalid_parameter: "BAD_USER_INPUT",
  not_found: "NOT_FOUND",
  forbidden: "FORBIDDEN",
  unauthorized: "UNAUTHENTICATED",
  rate_limited: "RATE_LIMITED",
  unavailable: "UNAVAILABLE",
  conflict: "CONFLICT",
};

export function mapError(e: GraphQLError, log: pino.Logger, reqId: string): GraphQLError {
  const orig = e.originalError;
  if (!orig || orig instanceof GraphQLError) return e; // validation, scope and variable errors as they are
  const opts = { nodes: e.nodes, source: e.source, positions: e.positions, path: e.path };
  // A pipeline error answers with its code's entry in api/errors.ts, as over REST.
  const code = pipelineErrorCode(orig);
  const api = orig instanceof ApiError ? orig : code ? toApiError(orig) : null;
  // An unreachable account store is no fault of the query: the write is refused, and says so (503).
  if (api && (api.status < 500 || code === "catalog_unavailable"))
    return new GraphQLError(api.message, {
      ...opts,
      extensions: {
        code: CODES[api.code] ?? api.code.toUpperCase(),
        status: api.status,
        ...(api.details.length ? { details: api.details } : {}),
      },
    });
  log.error({ err: orig, reqId, path: e.path }, "graphql resolver failed");
  return new GraphQLError("internal server error", { ...opts, extensions: { code: "INTERNAL_SERVER_ERROR" } });
}

export function mapErrors(result: ExecutionResult, log: pino.Logger, reqId: string): ExecutionResult {
  if (!result.errors?.length) return result;
  return { ...result, errors: result.errors.map((e) => mapError(e, log, reqId)) };
}

/** A response body holding only errors (401, 429, 503 before execution). */
export const errorsBody = (message: string, code: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ errors: [{ message, extensions: { code, ...extra } }] });

/** The key's GraphQL cost budget for the minute is spent: 429, Retry-After, and the budget in extensions.cost. */
export class CostBudgetSpent extends RateLimited {
  constructor(readonly report: CostReport) {
    const retry = Math.max(1, Math.ceil((Date.parse(report.resetAt) - Date.now()) / 1000));
    super(
      retry,
      {},
      `the api key's GraphQL cost budget of ${report.limit} points per minute is spent ` +
        `(this query costs ${report.requested}); retry after ${retry} s`,
    );
  }
}
