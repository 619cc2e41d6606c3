// What a pipeline error is, as a stable code: callers (the API, the CLIs, the workers) decide
// what each one means to them; the pipeline knows nothing of HTTP.
export type PipelineErrorCode =
  /** A rebalance names a portfolio neither the catalog nor the published snapshot has. */
  | "portfolio_not_found"
  /** The published snapshot changed while a publisher computed on it: recompute on the new one. */
  | "manifest_moved"
  /** Another process held the publish lock for longer than this one would wait. */
  | "publish_locked"
  /** The source has rows or files the pipeline refuses. */
  | "source_rejected"
  /** A source asked to continue the published snapshot does not only add days to it. */
  | "not_an_append"
  /** A table is not in the storage order a reader relies on. */
  | "storage_order"
  /** A record of a run's staging folder is not JSON or not of its schema (store/snapshot/staging-layout.ts). */
  | "staging_record_corrupt"
  /** The account store (the PostgreSQL catalog) could not be reached: nothing was written. */
  | "catalog_unavailable";

/** Any pipeline error that carries a code. */
export interface CodedError extends Error {
  readonly code: PipelineErrorCode;
}

export function pipelineErrorCode(e: unknown): PipelineErrorCode | null {
  return e instanceof Error &&
    typeof (e as Partial<CodedError>).code === "string" &&
    PIPELINE_CODES.has((e as CodedError).code)
    ? (e as CodedError).code
    : null;
}

const PIPELINE_CODES: ReadonlySet<string> = new Set<PipelineErrorCode>([
  "portfolio_not_found",
  "manifest_moved",
  "publish_locked",
  "source_rejected",
  "not_an_append",
  "storage_order",
  "staging_record_corrupt",
  "catalog_unavailable",
]);
