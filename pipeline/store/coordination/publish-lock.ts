// One publisher at a time, across processes and machines sharing the store: proper-lockfile
// creates DATA_DIR/locks/publish.lock with mkdir (atomic on local and network file systems),
// refreshes its mtime while held and takes over a lock whose holder stopped refreshing it.
// A file lock rather than a Redis one: the store is the shared resource, and publishers without
// Redis (the in-process runner, `npm start`) must be excluded just the same.
import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type Lockfile from "proper-lockfile";
import type { PipelineErrorCode } from "../../domain/errors.ts";

// Loaded with require, as DuckDB's API is (./duck.ts): no export scan of its CommonJS files.
const lockfile = createRequire(import.meta.url)("proper-lockfile") as typeof Lockfile;

export const locksDir = (dataDir: string) => join(dataDir, "locks");

export class PublishLockError extends Error {
  readonly code: PipelineErrorCode = "publish_locked";
  constructor(message: string) {
    super(message);
    this.name = "PublishLockError";
  }
}

export interface LockTimes {
  /** How long to wait for another publisher before giving up. */
  waitMs?: number;
  /** A lock not refreshed for this long belongs to a dead publisher and is taken over. */
  staleMs?: number;
}

/**
 * Runs `fn` holding the publish lock. `fn` must call `held()` right before its committing step:
 * it throws when the lock was lost meanwhile (e.g. the process stalled past `staleMs`).
 */
export async function withPublishLock<T>(
  dataDir: string,
  fn: (held: () => void) => Promise<T> | T,
  times: LockTimes = {},
): Promise<T> {
  const staleMs = times.staleMs ?? 20_000;
  const waitMs = times.waitMs ?? 120_000;
  mkdirSync(locksDir(dataDir), { recursive: true });
  let compromised: Error | null = null;
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(dataDir, {
      lockfilePath: join(locksDir(dataDir), "publish.lock"),
      realpath: false,
      stale: staleMs,
      update: Math.max(1000, Math.floor(staleMs / 4)),
      // about waitMs in total: 100 ms apart, at most 1 s apart
      retries: { retries: Math.ceil(waitMs / 1000) + 10, factor: 1.3, minTimeout: 100, maxTimeout: 1000 },
      onCompromised: (e) => (compromised = e),
    });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ELOCKED")
      throw new PublishLockError(
        `another publisher held ${join(locksDir(dataDir), "publish.lock")} for ` +
          `over ${Math.round(waitMs / 1000)} s; nothing was published`,
      );
    throw e;
  }
  try {
    return await fn(() => {
      if (compromised)
        throw new PublishLockError(
          `the publish lock was lost while publishing (${(compromised as Error).message}); nothing was published`,
        );
    });
  } finally {
    await release().catch(() => undefined); // already taken over: nothing of ours to remove
  }
}
