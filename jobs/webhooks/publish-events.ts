// The events step: each publish since the last one handled (a cursor file, DATA_DIR/webhooks/
// cursor.json, holding the manifest version) gets its events computed against the snapshot it
// replaced, and one delivery job per (event, webhook) enqueued. Running it twice for the same
// publish (a crash between enqueueing and the cursor, two processes) enqueues the same job ids,
// which the queues join. One process at a time holds DATA_DIR/locks/webhook-events.lock.
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type Lockfile from "proper-lockfile";
import { eventsOfPublish, type WatchSource } from "../../pipeline/events/index.ts";
import { writeAside } from "../../pipeline/store/coordination/atomic-write.ts";
import { locksDir } from "../../pipeline/store/coordination/publish-lock.ts";
import { type PublishEntry, readManifest, snapshotDir } from "../../pipeline/store/snapshot/snapshots.ts";
import type { WebhookStore } from "../../pipeline/store/webhooks/types.ts";
import type { DeliveryJob } from "./attempt.ts";

const lockfile = createRequire(import.meta.url)("proper-lockfile") as typeof Lockfile;

export const webhooksDir = (dataDir: string) => join(dataDir, "webhooks");
const cursorPath = (dataDir: string) => join(webhooksDir(dataDir), "cursor.json");

export interface EventStepDeps {
  store: Pick<WebhookStore, "subscribers">;
  watchedBy: WatchSource;
  enqueue(jobs: DeliveryJob[]): Promise<unknown>;
  log?: { info(o: object, m: string): void; warn(o: object, m: string): void };
}

/** The manifest version handled last; a store without a cursor starts at the published one (no backlog). */
function readCursor(dataDir: string, published: number): number {
  const p = cursorPath(dataDir);
  return existsSync(p) ? Number(JSON.parse(readFileSync(p, "utf8")).version) : published;
}

function writeCursor(dataDir: string, version: number): void {
  mkdirSync(webhooksDir(dataDir), { recursive: true });
  writeAside(cursorPath(dataDir), JSON.stringify({ version })).commit();
}

/**
 * Starts the cursor at the published version when there is none, under the step's lock (waited for):
 * a process with webhooks calls it as it opens them, so every later publish, its own or another's,
 * is after the cursor and handled, never taken for the backlog a new cursor skips.
 */
export async function ensureCursor(dataDir: string): Promise<void> {
  if (existsSync(cursorPath(dataDir)) || !readManifest(dataDir)?.version) return;
  mkdirSync(locksDir(dataDir), { recursive: true });
  const release = await lockfile.lock(dataDir, {
    lockfilePath: join(locksDir(dataDir), "webhook-events.lock"),
    realpath: false,
    stale: 60_000,
    retries: { retries: 600, minTimeout: 100, maxTimeout: 200 },
  });
  try {
    if (!existsSync(cursorPath(dataDir))) writeCursor(dataDir, readManifest(dataDir)?.version ?? 0);
  } finally {
    await release().catch(() => undefined);
  }
}

/**
 * Handles the publishes after the cursor, oldest first; returns how many deliveries it enqueued
 * (null when another process holds the step). Without a cursor yet, it starts after the published
 * version, or at `firstVersion` (the publish a run step has just made).
 */
export async function emitPublishEvents(
  dataDir: string,
  d: EventStepDeps,
  opts: { firstVersion?: number } = {},
): Promise<number | null> {
  if (!readManifest(dataDir)?.version) return 0;
  mkdirSync(locksDir(dataDir), { recursive: true });
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(dataDir, {
      lockfilePath: join(locksDir(dataDir), "webhook-events.lock"),
      realpath: false,
      stale: 60_000,
    });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ELOCKED") return null;
    throw e;
  }
  try {
    // read under the lock: a publish made while another process held the step is handled here
    const manifest = readManifest(dataDir)!;
    const version = manifest.version ?? 0;
    const from = readCursor(dataDir, opts.firstVersion === undefined ? version : opts.firstVersion - 1);
    if (!existsSync(cursorPath(dataDir))) writeCursor(dataDir, from);
    const log = [...(manifest.log ?? [])].sort((a, b) => a.version - b.version);
    let sent = 0;
    for (const entry of log.filter((e) => e.version > from)) {
      sent += await emitOne(dataDir, entry, log, d);
      writeCursor(dataDir, entry.version);
    }
    if (version > from) writeCursor(dataDir, version);
    return sent;
  } finally {
    await release().catch(() => undefined);
  }
}

async function emitOne(dataDir: string, entry: PublishEntry, log: PublishEntry[], d: EventStepDeps) {
  const currentDir = snapshotDir(dataDir, entry.snapshotId);
  if (!existsSync(currentDir)) {
    d.log?.warn({ snapshot: entry.snapshotId }, "webhook events skipped: the snapshot was pruned already");
    return 0;
  }
  const before = log.filter((e) => e.version < entry.version).at(-1);
  const prevDir = before ? snapshotDir(dataDir, before.snapshotId) : null;
  const previousDir = prevDir && existsSync(prevDir) ? prevDir : null;
  const { events, deliveries } = await eventsOfPublish({ currentDir, previousDir }, d.store, d.watchedBy);
  await d.enqueue(deliveries);
  d.log?.info(
    { snapshot: entry.snapshotId, events: events.length, deliveries: deliveries.length },
    "webhook events enqueued",
  );
  return deliveries.length;
}
