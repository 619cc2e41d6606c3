// A source row (or file) refused at ingest: shared by the source readers (sources/) and the
// financial statement parser (financials/), which neither imports from the other.
export interface RejectedRow {
  file: string;
  /** 1-based data row number (header excluded); 0 for a file-level problem such as a missing column. */
  row: number;
  column: string;
  reason: string;
}
