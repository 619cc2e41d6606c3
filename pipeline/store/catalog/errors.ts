// The catalog's typed errors. CatalogError: the write was refused for what it asks (the API turns
// each into a field error). CatalogUnavailable: the store could not be reached (PostgreSQL down or
// cut off); nothing was written and the API answers 503 (pipeline/domain/errors.ts code).
import type { CodedError } from "../../domain/errors.ts";

export class CatalogError extends Error {
  constructor(
    /** `limit`: a per-user limit (MAX_OWNED) would be exceeded; nothing was written */
    readonly code: "not_found" | "conflict" | "invalid" | "limit",
    message: string,
  ) {
    super(message);
    this.name = "CatalogError";
  }
}

export class CatalogUnavailable extends Error implements CodedError {
  readonly code = "catalog_unavailable" as const;
  constructor(cause: unknown) {
    super(`the account store is unreachable (${(cause as Error)?.message ?? String(cause)})`, { cause });
    this.name = "CatalogUnavailable";
  }
}
