// GraphQL's HTTP edges apart from the operation: the request body read within its bound, and the
// refusals answered as GraphQL errors bodies (by api/graphql/http.ts and by the fast path).
import type { ServerResponse } from "node:http";
import type { Request, Response } from "express";
import { requestId } from "../access-log.ts";
import { ApiError } from "../errors.ts";
import { CostBudgetSpent, errorsBody } from "./errors.ts";

/** Largest request body accepted (a query document with variables). */
export const MAX_BODY = 256 * 1024;

/**
 * The request body as UTF-8 text, at most MAX_BODY bytes (null when larger). A plain reader:
 * graphql-http checks the content type itself, and body-parser's generality cost a measurable
 * share of a cached read.
 */
export function readBody(req: Request): Promise<string | null> {
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
export const EMPTY_REFUSALS: Record<number, [string, string]> = {
  405: ["METHOD_NOT_ALLOWED", "GraphQL is served on GET and POST only"],
  415: [
    "UNSUPPORTED_MEDIA_TYPE",
    "a POST body must be application/json (charset utf-8) holding query, variables and operationName",
  ],
};
