import { join } from "node:path";

/** What ingest records for the publish step besides the plan. */
export interface RunRecord {
  /** The ingest job's creation time: a plan from another flow of the same source is not reused. */
  ingestJob: number;
  baseVersion: number;
  ingestMs: number;
  startedAt: number;
  /**
   * The fingerprint of the source's bytes as ingest read them: the snapshot's sourceId. Absent from
   * a record written before jobs were named by the stamp, when the flow's sourceVersion was it.
   */
  sourceId?: string;
}
export const recordPath = (out: string) => join(out, ".flow", "run.json");
