// Whether a run continues the published snapshot: read by the runner and, before anything is queued,
// by the queue's dispatch and the worker (apart from runner.ts so the queued path does not load it).
import { planAppend, readSourceRecord } from "../../pipeline/sources/append-plan.ts";
import { readManifest, snapshotDir } from "../../pipeline/store/snapshot/snapshots.ts";
import { serviceConfig } from "../config.ts";

const appendEnabled = () => serviceConfig().pipelineAppend;

/**
 * Whether a run of `sourceDir` would continue the published snapshot (a nightly append): a queue
 * runs that as one job on one worker instead of fanning a whole run out as a flow.
 */
export async function continuesPublished(dataDir: string, sourceDir: string): Promise<boolean> {
  const p = publishedRecord(dataDir);
  return p !== null && (await planAppend(sourceDir, p.record)).kind === "append";
}

/** The published snapshot and the source files it recorded (null: appends off, nothing published, or no record). */
export function publishedRecord(dataDir: string) {
  const base = appendEnabled() ? readManifest(dataDir) : null;
  const record = base ? readSourceRecord(snapshotDir(dataDir, base.snapshotId)) : null;
  return base && record ? { base, record } : null;
}
