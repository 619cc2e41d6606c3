// Snapshot folders and the manifest: each run writes a new folder, then one rename of the
// manifest publishes it. Readers only ever follow the manifest, so they see all or nothing.
// Publishing holds the store's publish lock and may be conditional on the manifest it expects
// (compare-and-swap), so concurrent publishers neither lose an update nor prune each other.
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { z } from "zod";
import type { PipelineErrorCode } from "../../domain/errors.ts";
import { writeAside } from "../coordination/atomic-write.ts";
import { liveLeases } from "../coordination/leases.ts";
import { isAlive, readHolder } from "../coordination/liveness.ts";
import { type LockTimes, locksDir, withPublishLock } from "../coordination/publish-lock.ts";
import { writeReaderIndex } from "./reader-index.ts";
import {
  exportCacheDir,
  parseJsonRecord,
  readJsonRecord,
  STAGING,
  snapshotsDir,
  stagingBeat,
  stagingPath,
} from "./staging-layout.ts";

// The staging area's paths are staging-layout.ts's; re-exported for the callers that know them from here.
export { snapshotsDir, stagingBeat, stagingPath };

export const KEEP_SNAPSHOTS = 3;
/** Publish log entries kept in the manifest: enough for a long run to see what it raced with. */
export const KEEP_LOG = 50;

// The manifest and each snapshot's meta.json are read through these schemas: a file of another
// shape (another version's, or edited by hand) is a StagingRecordError naming it, not a wrong value
// deep inside a run or the server. Unknown fields are kept (a newer writer's stay when this one rewrites).
const publishKind = z.enum(["run", "backfill", "rebalance"]);
const publishEntry = z.looseObject({
  version: z.number(),
  snapshotId: z.string().min(1),
  kind: publishKind,
  /** The portfolio a rebalance recomputed. */
  portfolio: z.string().optional(),
  /** The BullMQ job that published it, when one did. */
  job: z.string().optional(),
  publishedAt: z.string(),
});
const manifestSchema = z.looseObject({
  snapshotId: z.string().min(1),
  sourceId: z.string(),
  publishedAt: z.string(),
  /** Published ids, newest first (pruned to KEEP_SNAPSHOTS). */
  history: z.array(z.string()),
  /** Increases by one with every publish (absent in manifests written before it existed: 0). */
  version: z.number().optional(),
  /** The newest publishes, newest first. */
  log: z.array(publishEntry).optional(),
});
const snapshotMetaSchema = z.looseObject({
  id: z.string().min(1),
  createdAt: z.string(),
  sourceId: z.string(),
  sourceDir: z.string(),
  lastPriceDate: z.string(),
  counts: z.record(z.string(), z.number()),
  timingsMs: z.record(z.string(), z.number()),
});

export type PublishKind = z.infer<typeof publishKind>;
export type PublishEntry = z.infer<typeof publishEntry>;
export type Manifest = z.infer<typeof manifestSchema>;
export type SnapshotMeta = z.infer<typeof snapshotMetaSchema>;

/** What a run knows of its snapshot; the id is a new one unless the run chose it (a flow records it first). */
export interface MetaParts {
  id?: string;
  sourceId: string;
  sourceDir: string;
  lastPriceDate: string;
  counts: Record<string, number>;
  timingsMs: Record<string, number>;
}

/**
 * A snapshot's meta.json, built here for every kind of run (full, backfill, append, rebalance) and every
 * executor (inline, worker threads, the BullMQ flow): one field order, one clock, an absolute source path.
 */
export function snapshotMeta(m: MetaParts): SnapshotMeta {
  return {
    id: m.id ?? newSnapshotId(),
    createdAt: new Date().toISOString(),
    sourceId: m.sourceId,
    sourceDir: resolve(m.sourceDir),
    lastPriceDate: m.lastPriceDate,
    counts: m.counts,
    timingsMs: m.timingsMs,
  };
}

export const snapshotDir = (dataDir: string, id: string) => join(snapshotsDir(dataDir), id);
export const manifestPath = (dataDir: string) => join(dataDir, "manifest.json");

export function newSnapshotId(now = new Date()): string {
  return `${now
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z")}-${randomBytes(3).toString("hex")}`;
}

/** The published manifest; null when there is none, or when it is not JSON (a hand-edited file). */
export function readManifest(dataDir: string): Manifest | null {
  const p = manifestPath(dataDir);
  if (!existsSync(p)) return null;
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(p, "utf8"));
  } catch {
    return null; // a torn read cannot happen (rename is atomic); a hand-edited file can
  }
  return parseJsonRecord(p, manifestSchema, json);
}

/** A snapshot's meta.json, through its schema (absent: an error naming the file, as before). */
export function readMeta(dataDir: string, id: string): SnapshotMeta {
  const p = join(snapshotDir(dataDir, id), "meta.json");
  const meta = readJsonRecord(p, snapshotMetaSchema);
  if (!meta) throw new Error(`ENOENT: no such file or directory, open '${p}'`);
  return meta;
}

/** The manifest moved away from the snapshot a publisher computed on: recompute on the new one. */
export class ManifestMovedError extends Error {
  readonly code: PipelineErrorCode = "manifest_moved";
  constructor(
    readonly expected: string | null,
    readonly actual: string | null,
  ) {
    super(`the published snapshot moved from ${expected ?? "none"} to ${actual ?? "none"} while this one was computed`);
    this.name = "ManifestMovedError";
  }
}

/**
 * The store's filesystem filled up during a run (ENOSPC from Node, "No space left on device" from
 * DuckDB, a disk quota): the run was discarded and the published snapshot is as it was.
 */
export class NoSpaceError extends Error {
  readonly code = "NO_SPACE";
  constructor(
    readonly dataDir: string,
    readonly published: string | null,
    cause: unknown,
  ) {
    const what = String((cause as Error)?.message ?? cause).split("\n")[0];
    super(
      `no space left on the store ${dataDir} (${what}); the run was discarded and its staging files removed; ` +
        `the published snapshot is unchanged (${published ?? "none yet"})`,
      { cause },
    );
    this.name = "NoSpaceError";
  }
}

const NO_SPACE_TEXT = /\bENOSPC\b|No space left on device|\bEDQUOT\b|Disk quota exceeded/;

/** Whether an error (Node's, DuckDB's, or a partition job's carrying either) says the disk is full. */
export function isNoSpace(e: unknown): boolean {
  if (e instanceof NoSpaceError) return true;
  const code = (e as { code?: unknown } | null)?.code;
  if (code === "ENOSPC" || code === "EDQUOT") return true;
  return NO_SPACE_TEXT.test(String((e as Error | null)?.message ?? e));
}

export interface PublishOptions extends LockTimes {
  kind?: PublishKind;
  portfolio?: string;
  job?: string;
  /** Compare-and-swap: publish only if the manifest still names this snapshot (null: none yet). */
  expect?: string | null;
  /** Prune's patience with heartbeats and leases (tests shorten it). */
  heartbeatStaleMs?: number;
}

/**
 * Moves a finished staging folder into place and switches the manifest to it atomically, under the
 * publish lock. With `expect`, a moved manifest throws ManifestMovedError and publishes nothing
 * (the staging folder is left to the caller).
 */
export async function publishSnapshot(
  dataDir: string,
  staging: string,
  meta: SnapshotMeta,
  opts: PublishOptions = {},
): Promise<Manifest> {
  // outside the lock: the reader's index of the folder, so a server's swap to it derives nothing
  // (what the folder links from the published snapshot is taken from that one's index)
  const current = readManifest(dataDir);
  await writeReaderIndex(staging, current ? snapshotDir(dataDir, current.snapshotId) : null);
  const manifest = await withPublishLock(
    dataDir,
    (held) => {
      const prev = readManifest(dataDir);
      if (opts.expect !== undefined && (prev?.snapshotId ?? null) !== opts.expect)
        throw new ManifestMovedError(opts.expect, prev?.snapshotId ?? null);
      held();
      const version = (prev?.version ?? 0) + 1;
      const publishedAt = new Date().toISOString();
      const entry: PublishEntry = {
        version,
        snapshotId: meta.id,
        kind: opts.kind ?? "run",
        publishedAt,
        ...(opts.portfolio ? { portfolio: opts.portfolio } : {}),
        ...(opts.job ? { job: opts.job } : {}),
      };
      const next: Manifest = {
        snapshotId: meta.id,
        sourceId: meta.sourceId,
        publishedAt,
        history: [meta.id, ...(prev?.history ?? []).filter((h) => h !== meta.id)].slice(0, KEEP_SNAPSHOTS),
        version,
        log: [entry, ...(prev?.log ?? [])].slice(0, KEEP_LOG),
      };
      // The new manifest is written aside before the folder moves: a failure up to the rename of the
      // folder leaves the staging folder whole (a retry can publish it), after it only renames remain.
      // (a full disk fails this write halfway: writeAside removes the half-written file)
      const pending = writeAside(manifestPath(dataDir), JSON.stringify(next, null, 2));
      try {
        writeFileSync(join(staging, "meta.json"), JSON.stringify(meta, null, 2));
        renameSync(staging, snapshotDir(dataDir, meta.id));
      } catch (e) {
        pending.abort();
        throw e;
      }
      pending.commit();
      pruneSnapshots(dataDir, next, opts);
      return next;
    },
    opts,
  );
  return manifest;
}

/** Publishes that happened after manifest version `since` (newest first). */
export function publishedSince(manifest: Manifest | null, since: number): PublishEntry[] {
  return (manifest?.log ?? []).filter((e) => e.version > since);
}

export interface PruneTimes {
  /** A staging heartbeat or a lease not refreshed for this long is dead (default 2 min). */
  heartbeatStaleMs?: number;
}

/**
 * Deletes snapshots that are neither in the manifest's history nor leased by a reader (and their
 * cached exports), staging folders whose run is dead, and dead heartbeat and lease files. Call it
 * holding the publish lock (publishSnapshot does; pruneStore takes it): a snapshot being published
 * is never half-seen here.
 */
export function pruneSnapshots(dataDir: string, manifest: Manifest, times: PruneTimes = {}): string[] {
  const staleMs = times.heartbeatStaleMs ?? 120_000;
  const dir = snapshotsDir(dataDir);
  if (!existsSync(dir)) return [];
  const keep = new Set([...manifest.history, ...liveLeases(dataDir, staleMs)]);
  const removed: string[] = [];
  for (const name of readdirSync(dir)) {
    const staging = name.startsWith(STAGING);
    // A staging folder's siblings (`<folder>.tmp`: the run's DuckDB file and spill files; `<folder>.flow`: a flow's
    // files set aside while it publishes) live and die with its run: ids have no dots.
    const id = name.slice(STAGING.length).split(".")[0];
    const dead = staging ? !isAlive(stagingBeat(dataDir, id), staleMs) : !keep.has(name);
    if (dead) {
      rmSync(join(dir, name), { recursive: true, force: true });
      if (staging) rmSync(stagingBeat(dataDir, id), { force: true });
      removed.push(name);
    }
  }
  // cached exports of snapshots no longer kept
  for (const name of readdirSafe(exportCacheDir(dataDir)))
    if (!keep.has(name)) rmSync(join(exportCacheDir(dataDir), name), { recursive: true, force: true });
  // heartbeats whose staging folder is gone and whose owner is dead
  if (existsSync(locksDir(dataDir)))
    for (const f of readdirSync(locksDir(dataDir)))
      if (f.startsWith("staging-") && !isAlive(join(locksDir(dataDir), f), staleMs))
        rmSync(join(locksDir(dataDir), f), { force: true });
  return removed;
}

/** Prune outside a publish (a worker starting up clears what dead runs left). */
export async function pruneStore(dataDir: string, times: PruneTimes & LockTimes = {}): Promise<string[]> {
  return withPublishLock(
    dataDir,
    () => {
      const m = readManifest(dataDir);
      return m ? pruneSnapshots(dataDir, m, times) : pruneStagingOnly(dataDir, times);
    },
    times,
  );
}

function pruneStagingOnly(dataDir: string, times: PruneTimes): string[] {
  return pruneSnapshots(
    dataDir,
    {
      snapshotId: "",
      sourceId: "",
      publishedAt: "",
      history: readdirSafe(snapshotsDir(dataDir)).filter((n) => !n.startsWith(STAGING)),
    },
    times,
  );
}

const readdirSafe = (d: string) => (existsSync(d) ? readdirSync(d) : []);

/** Staging folders whose run is still alive, with the job each belongs to. */
export function liveStagings(dataDir: string, staleMs = 120_000): { id: string; job?: string }[] {
  return readdirSafe(snapshotsDir(dataDir))
    .filter((n) => n.startsWith(STAGING) && !n.slice(STAGING.length).includes("."))
    .map((n) => n.slice(STAGING.length))
    .filter((id) => isAlive(stagingBeat(dataDir, id), staleMs))
    .map((id) => {
      const job = readHolder(stagingBeat(dataDir, id))?.job;
      return job ? { id, job } : { id };
    });
}

/** A staging folder removed (its heartbeat is its owner's: pipeline/run/lifecycle.ts). */
export function discardStaging(staging: string): void {
  rmSync(staging, { recursive: true, force: true });
}
