// Rejected-row reports: every source reader returns these instead of throwing on bad data,
// so one run can name every problem at once.
import type { PipelineErrorCode } from "../domain/errors.ts";
import type { RejectedRow } from "../domain/rejects.ts";

export type { RejectedRow };

export class SourceRejectedError extends Error {
  readonly code: PipelineErrorCode = "source_rejected";
  /** `total` counts every problem; `rejects` lists at most the first thousand per table. */
  constructor(
    readonly rejects: RejectedRow[],
    readonly total = rejects.length,
  ) {
    super(`source rejected: ${total} problem(s); first: ${rejects[0] ? formatReject(rejects[0]) : "none"}`);
    this.name = "SourceRejectedError";
  }
}

export function formatReject(r: RejectedRow): string {
  return `${r.file}${r.row ? `:${r.row}` : ""} [${r.column}] ${r.reason}`;
}
