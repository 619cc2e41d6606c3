// Snapshot folders and the manifest: each run writes a new folder, then one rename of the
// manifest publishes it. Readers only ever follow the manifest, so they see all or nothing.
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const KEEP_SNAPSHOTS = 3;

export interface Manifest {
  snapshotId: string;
  sourceId: string;
  publishedAt: string;
  /** Published ids, newest first (pruned to KEEP_SNAPSHOTS). */
  history: string[];
}

export interface SnapshotMeta {
  id: string;
  createdAt: string;
  sourceId: string;
  sourceDir: string;
  lastPriceDate: string;
  counts: Record<string, number>;
  timingsMs: Record<string, number>;
}

export const snapshotsDir = (dataDir: string) => join(dataDir, "snapshots");
export const snapshotDir = (dataDir: string, id: string) => join(snapshotsDir(dataDir), id);
export const manifestPath = (dataDir: string) => join(dataDir, "manifest.json");

export function newSnapshotId(now = new Date()): string {
  return `${now.toISOString().replace(/[-:]/g, "").replace(/\.\d+Z$/, "Z")}-${randomBytes(3).toString("hex")}`;
}

/** A private folder to write a snapshot into; invisible to readers until published. */
export function stagingDir(dataDir: string, id: string): string {
  const dir = join(snapshotsDir(dataDir), `.staging-${id}`);
  mkdirSync(dir, { recursive: true });
  return dir;
}

export function readManifest(dataDir: string): Manifest | null {
  const p = manifestPath(dataDir);
  if (!existsSync(p)) return null;
  try {
    return JSON.parse(readFileSync(p, "utf8")) as Manifest;
  } catch {
    return null; // a torn read cannot happen (rename is atomic); a hand-edited file can
  }
}

export function readMeta(dataDir: string, id: string): SnapshotMeta {
  return JSON.parse(readFileSync(join(snapshotDir(dataDir, id), "meta.json"), "utf8")) as SnapshotMeta;
}

/** Moves a finished staging folder into place and switches the manifest to it atomically. */
export function publishSnapshot(dataDir: string, staging: string, meta: SnapshotMeta): Manifest {
  writeFileSync(join(staging, "meta.json"), JSON.stringify(meta, null, 2));
  renameSync(staging, snapshotDir(dataDir, meta.id));
  const prev = readManifest(dataDir);
  const manifest: Manifest = {
    snapshotId: meta.id,
    sourceId: meta.sourceId,
    publishedAt: new Date().toISOString(),
    history: [meta.id, ...(prev?.history ?? []).filter((h) => h !== meta.id)].slice(0, KEEP_SNAPSHOTS),
  };
  const tmp = `${manifestPath(dataDir)}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(manifest, null, 2));
  renameSync(tmp, manifestPath(dataDir));
  pruneSnapshots(dataDir, manifest);
  return manifest;
}

/** Deletes snapshots outside the manifest's history, and staging folders left by dead runs. */
export function pruneSnapshots(dataDir: string, manifest: Manifest, staleStagingMs = 3_600_000): string[] {
  const dir = snapshotsDir(dataDir);
  if (!existsSync(dir)) return [];
  const keep = new Set(manifest.history);
  const removed: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const stale = name.startsWith(".staging-") ? Date.now() - statSync(p).mtimeMs > staleStagingMs : !keep.has(name);
    if (stale) {
      rmSync(p, { recursive: true, force: true });
      removed.push(name);
    }
  }
  return removed;
}

export function discardStaging(staging: string): void {
  rmSync(staging, { recursive: true, force: true });
}
