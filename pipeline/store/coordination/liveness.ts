// Heartbeat files: "this process on this host is still using X". The owner rewrites the file's
// mtime every few seconds; anyone sharing the store (another process, another machine on the same
// volume) judges it alive while the mtime is fresh. On the owner's own host a dead pid settles it
// at once, so a SIGKILLed worker's leftovers need not wait out the stale time.
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { dirname } from "node:path";
import { z } from "zod";

export interface HolderInfo {
  host: string;
  pid: number;
  startedAt: string;
  /** The BullMQ job (if any) on whose behalf the file is held; lets a dispatcher see its job still running. */
  job?: string;
}

export interface Heartbeat {
  readonly path: string;
  stop(): void;
  /** Stops touching the file but leaves it (a flow's next job takes it over). */
  pause(): void;
}

export interface HeartbeatExtra {
  job?: string;
  /** Holder host; a name that is no machine's makes liveness go by the file's age alone. */
  host?: string;
  /** Recreated when removed under us only while this path exists. */
  whileExists?: string;
}

export const HEARTBEAT_MS = 5_000;

export function startHeartbeat(path: string, extra: HeartbeatExtra = {}, intervalMs = HEARTBEAT_MS): Heartbeat {
  mkdirSync(dirname(path), { recursive: true });
  const { whileExists, ...rest } = extra;
  const info: HolderInfo = { host: hostname(), pid: process.pid, startedAt: new Date().toISOString(), ...rest };
  writeFileSync(path, JSON.stringify(info));
  const timer = setInterval(() => {
    const now = new Date();
    try {
      utimesSync(path, now, now);
    } catch {
      // removed under us (prune judged it dead after a long stall): recreate, the holder is alive
      try {
        if (whileExists === undefined || existsSync(whileExists)) writeFileSync(path, JSON.stringify(info));
      } catch {
        /* the store itself is gone; nothing to keep alive */
      }
    }
  }, intervalMs);
  timer.unref();
  return {
    path,
    stop() {
      clearInterval(timer);
      rmSync(path, { force: true });
    },
    pause() {
      clearInterval(timer);
    },
  };
}

const holderSchema = z.object({
  host: z.string(),
  pid: z.number().int(),
  startedAt: z.string(),
  job: z.string().optional(),
});

/** The file's holder; null when it is unreadable or not a holder record (then only its age counts). */
export function readHolder(path: string): HolderInfo | null {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    return null;
  }
  const r = holderSchema.safeParse(json);
  return r.success ? r.data : null;
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"; // exists, owned by someone else
  }
}

/**
 * Alive: on this host, while its pid runs (a stage blocking the event loop does not make it
 * stale); from another host, while its mtime is younger than `staleMs`.
 */
export function isAlive(path: string, staleMs: number, now = Date.now()): boolean {
  let mtime: number;
  try {
    mtime = statSync(path).mtimeMs;
  } catch {
    return false;
  }
  const holder = readHolder(path);
  if (holder && holder.host === hostname()) return pidAlive(holder.pid);
  return now - mtime < staleMs;
}
