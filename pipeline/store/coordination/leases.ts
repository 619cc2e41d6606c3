// Read leases: a process reading a snapshot's files (a server loading or holding it, a rebalance or
// backfill reading its tables) keeps a heartbeat file under DATA_DIR/leases; prune keeps every
// snapshot with a live lease, published or not.
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, rmSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { type Heartbeat, isAlive, startHeartbeat } from "./liveness.ts";

export const leasesDir = (dataDir: string) => join(dataDir, "leases");
const SEP = "~";

export function takeLease(dataDir: string, snapshotId: string): Heartbeat {
  return startHeartbeat(
    join(leasesDir(dataDir), `${snapshotId}${SEP}${hostname()}-${process.pid}-${randomBytes(3).toString("hex")}.alive`),
  );
}

export async function withLease<T>(dataDir: string, snapshotId: string, fn: () => Promise<T>): Promise<T> {
  const lease = takeLease(dataDir, snapshotId);
  try {
    return await fn();
  } finally {
    lease.stop();
  }
}

/** Snapshot ids with at least one live lease; dead lease files are removed on the way. */
export function liveLeases(dataDir: string, staleMs: number): Set<string> {
  const dir = leasesDir(dataDir);
  const live = new Set<string>();
  if (!existsSync(dir)) return live;
  for (const f of readdirSync(dir)) {
    const id = f.slice(0, f.indexOf(SEP));
    if (isAlive(join(dir, f), staleMs)) live.add(id);
    else rmSync(join(dir, f), { force: true });
  }
  return live;
}
