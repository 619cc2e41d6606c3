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

/**
 * One line for a person: a CSV row as `file:LINE`, the line an editor shows (the header is line 1,
 * so data row N is line N + 1), also in a duplicate's "first at" (the readers give data rows);
 * a Parquet row or a JSON item as `file row N`.
 */
export function formatReject(r: RejectedRow): string {
  const csv = r.file.endsWith(".csv");
  const place = !r.row ? r.file : csv ? `${r.file}:${r.row + 1}` : `${r.file} row ${r.row}`;
  const reason = csv ? r.reason.replace(/first at row (\d+)$/, (_, n) => `first at line ${Number(n) + 1}`) : r.reason;
  return `${place} [${r.column}] ${reason}`;
}
