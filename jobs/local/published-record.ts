// The published snapshot a run may continue (a nightly append): read by the runner and by the flow's
// ingest and fundamentals jobs (apart from runner.ts so the queued path does not load it).
import { readSourceRecord } from "../../pipeline/sources/append-plan.ts";
import { readManifest, snapshotDir } from "../../pipeline/store/snapshot/snapshots.ts";
import { serviceConfig } from "../config.ts";

const appendEnabled = () => serviceConfig().pipelineAppend;

/** The published snapshot and the source files it recorded (null: appends off, nothing published, or no record). */
export function publishedRecord(dataDir: string) {
  const base = appendEnabled() ? readManifest(dataDir) : null;
  const record = base ? readSourceRecord(snapshotDir(dataDir, base.snapshotId)) : null;
  return base && record ? { base, record } : null;
}
