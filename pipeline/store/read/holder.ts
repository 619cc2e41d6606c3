// Holds the snapshot a server serves and swaps it when the manifest moves: the new snapshot is
// opened (the lazy reader: its small tables; the in-memory loader: everything) before the one
// reference changes, so no request ever sees a half-opened one; the old one is then retired
// (the reader closes once its in-flight reads finish). It holds a read lease on the snapshot it
// opens and serves, so prune leaves that folder alone.
import { takeLease } from "../coordination/leases.ts";
import type { Heartbeat } from "../coordination/liveness.ts";
import type { Snapshot } from "../snapshot/model.ts";
import { readManifest } from "../snapshot/snapshots.ts";
import { loadSnapshot } from "./load-snapshot.ts";
import { SnapshotReader } from "./snapshot-reader.ts";

/** How a holder opens a published snapshot and lets go of the one it replaced. */
export interface SnapshotOpener<T extends { id: string }> {
  open(dataDir: string, id: string): Promise<T>;
  /** Lets go of a replaced snapshot; `released` runs once nothing reads it any more (its lease ends then). */
  retire?(old: T, released: () => void): void;
}
const IN_MEMORY: SnapshotOpener<Snapshot> = { open: loadSnapshot };
/** The lazy reader: opening reads the small tables only; a replaced reader closes once idle for `graceMs`. */
export const lazyReader = (graceMs = 5000): SnapshotOpener<SnapshotReader> => ({
  open: (dataDir, id) => SnapshotReader.open(dataDir, id),
  retire: (r, released) => r.retire(graceMs, released),
});

export class SnapshotHolder<T extends { id: string } = Snapshot> {
  private current: T | null = null;
  private timer: NodeJS.Timeout | null = null;
  private loading: Promise<void> | null = null;
  private listeners: ((s: T) => void)[] = [];
  private lease: Heartbeat | null = null;

  constructor(
    readonly dataDir: string,
    private readonly onError: (e: unknown) => void,
    private readonly opener: SnapshotOpener<T>,
  ) {}

  /** A holder of whole in-memory snapshots (tests and benchmarks; the server holds the lazy reader). */
  static inMemory(dataDir: string, onError: (e: unknown) => void = () => undefined): SnapshotHolder<Snapshot> {
    return new SnapshotHolder(dataDir, onError, IN_MEMORY);
  }

  get(): T | null {
    return this.current;
  }

  onSwap(fn: (s: T) => void): void {
    this.listeners.push(fn);
  }

  /** Loads the manifest's snapshot if it is not the one served; resolves when done. */
  async refresh(): Promise<T | null> {
    if (this.loading) await this.loading;
    const m = readManifest(this.dataDir);
    if (!m || m.snapshotId === this.current?.id) return this.current;
    this.loading = (async () => {
      const lease = this.tryLease(m.snapshotId);
      let next: T;
      try {
        next = await this.opener.open(this.dataDir, m.snapshotId);
      } catch (e) {
        lease?.stop();
        throw e;
      }
      const old = this.current;
      const oldLease = this.lease;
      this.current = next;
      this.lease = lease;
      if (old && this.opener.retire) this.opener.retire(old, () => oldLease?.stop());
      else oldLease?.stop();
      for (const fn of this.listeners) fn(next);
    })();
    try {
      await this.loading;
    } finally {
      this.loading = null;
    }
    return this.current;
  }

  /** A store mounted read-only cannot take leases: serve anyway (prune then relies on the history alone). */
  private tryLease(id: string): Heartbeat | null {
    try {
      return takeLease(this.dataDir, id);
    } catch (e) {
      this.onError(e);
      return null;
    }
  }

  watch(intervalMs = 1000): void {
    this.timer ??= setInterval(() => this.refresh().catch(this.onError), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.lease?.stop();
    this.lease = null;
  }
}
