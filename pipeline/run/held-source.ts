// "The published snapshot already holds this source": decided here for every entry point (a dispatched
// run or backfill, a scheduled run's job), so nothing is recomputed for a source already published.
import { mayBeBuiltFrom } from "../sources/append-plan.ts";
import { sourceFingerprint } from "../sources/fingerprint.ts";
import { readManifest, snapshotDir } from "../store/snapshot/snapshots.ts";

/**
 * The published snapshot's id when it was built from exactly the source in `sourceDir` (a backfill:
 * over `window`), else null. Only a snapshot that may hold it (same names and sizes, or a backfill's
 * window) has the source hashed: otherwise the run hashes it while DuckDB works (what the snapshot
 * records), not before (2 s for 2 GB: a fifth of a nightly append at 5,000 × 25).
 */
export function publishedHolding(
  dataDir: string,
  sourceDir: string,
  window?: { from: string; to: string },
): string | null {
  const current = readManifest(dataDir);
  if (!current) return null;
  const mayHold =
    window !== undefined || mayBeBuiltFrom(snapshotDir(dataDir, current.snapshotId), current.sourceId, sourceDir);
  if (!mayHold) return null;
  const fp = sourceFingerprint(sourceDir);
  // A run publishes the source's fingerprint as sourceId; a backfill appends `+fp@from..to`.
  const holds = window ? current.sourceId.endsWith(`+${fp}@${window.from}..${window.to}`) : current.sourceId === fp;
  return holds ? current.snapshotId : null;
}
