// Typed API errors: each carries its HTTP status and a stable code. The JSON body is always
// {"error": {"status", "code", "message", "details": [...]}}; 5xx details are never shown.
import { type PipelineErrorCode, pipelineErrorCode } from "../pipeline/domain/errors.ts";
import type { Scope } from "../pipeline/store/catalog/types.ts";
import { boundedMessage } from "./redact.ts";

export interface ErrorDetail {
  param: string;
  message: string;
}

export type ErrorCode =
  | "invalid_parameter"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "method_not_allowed"
  | "rate_limited"
  | "unavailable"
  | "internal_error"
  | "conflict"
  // refused by the HTTP parser before routing (api/client-error.ts)
  | "bad_request"
  | "headers_too_large"
  | "request_timeout";

export class ApiError extends Error {
  readonly details: ErrorDetail[];
  /** Messages may repeat user input: keys in it are redacted and long values cut (api/redact.ts). */
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    details: ErrorDetail[] = [],
    /** Extra response headers (Retry-After …). */
    readonly headers: Record<string, string> = {},
  ) {
    super(boundedMessage(message));
    this.details = details.map((d) => ({ param: boundedMessage(d.param), message: boundedMessage(d.message) }));
    this.name = new.target.name;
  }

  toBody() {
    const expose = this.status < 500 || this.code === "unavailable";
    return {
      error: {
        status: this.status,
        code: this.code,
        message: expose ? this.message : "internal server error",
        details: this.status < 500 ? this.details : [],
      },
    };
  }
}

export class InvalidParameter extends ApiError {
  constructor(details: ErrorDetail[], message?: string) {
    super(400, "invalid_parameter", message ?? details.map((d) => `${d.param}: ${d.message}`).join("; "), details);
  }
  static one(param: string, message: string) {
    return new InvalidParameter([{ param, message }]);
  }
}

export class Unauthorized extends ApiError {
  constructor(message = "a valid api_key is required") {
    super(401, "unauthorized", message);
  }
}

export class Forbidden extends ApiError {
  constructor(readonly scopes: Scope[]) {
    super(
      403,
      "forbidden",
      `the api key lacks the scope${scopes.length > 1 ? "s" : ""} ${scopes.join(", ")}`,
      scopes.map((s) => ({ param: "api_key", message: `requires scope ${s}` })),
    );
  }
}

export class NotFound extends ApiError {
  constructor(message = "not found") {
    super(404, "not_found", message);
  }
}

/** A path that exists, asked with a method it does not serve (RFC 9110 §15.5.6: Allow lists the ones it does). */
export class MethodNotAllowed extends ApiError {
  constructor(method: string, path: string, allow: readonly string[]) {
    super(405, "method_not_allowed", `${path} does not take ${method}; it takes ${allow.join(", ")}`, [], {
      Allow: allow.join(", "),
    });
  }
}

export class RateLimited extends ApiError {
  constructor(
    retryAfterSec: number,
    rateHeaders: Record<string, string> = {},
    message = `rate limit exceeded; retry after ${retryAfterSec} s`,
  ) {
    super(429, "rate_limited", message, [], { ...rateHeaders, "Retry-After": String(retryAfterSec) });
  }
}

export class Unavailable extends ApiError {
  constructor(message = "no snapshot has been published yet") {
    super(503, "unavailable", message, [], { "Retry-After": "5" });
  }
}

export class InternalError extends ApiError {
  constructor() {
    super(500, "internal_error", "internal server error");
  }
}

/**
 * The one table of what a pipeline error answers over HTTP (REST and GraphQL alike). null: an
 * opaque 500, the error being the service's own fault. The pipeline's errors carry codes only.
 */
const PIPELINE_ANSWERS: Record<PipelineErrorCode, (() => ApiError) | null> = {
  portfolio_not_found: () => new NotFound(),
  manifest_moved: () => new ApiError(409, "conflict", "the published snapshot changed meanwhile; retry"),
  publish_locked: () => new Unavailable("another snapshot is being published; retry"),
  source_rejected: null,
  not_an_append: null,
  storage_order: null,
  staging_record_corrupt: null,
  catalog_unavailable: () => new Unavailable("the account store is unreachable; nothing was written; retry"),
};

/** Any thrown value → an ApiError (unknown errors become an opaque 500). */
export function toApiError(e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  const code = pipelineErrorCode(e);
  if (code) return PIPELINE_ANSWERS[code]?.() ?? new InternalError();
  // body-parser style errors carrying a 4xx status (e.g. a malformed URI)
  const status =
    (e as { status?: unknown; statusCode?: unknown })?.status ?? (e as { statusCode?: unknown })?.statusCode;
  if (typeof status === "number" && status >= 400 && status < 500) {
    if (status === 404) return new NotFound();
    return new ApiError(400, "invalid_parameter", "bad request");
  }
  return new InternalError();
}
