// Holds the snapshot a server serves and swaps it when the manifest moves: the new snapshot is
// loaded completely before the reference changes, so no request ever sees a half-loaded one.
// It holds a read lease on the snapshot it loads and serves, so prune leaves that folder alone.
import { takeLease } from "./leases.ts";
import type { Heartbeat } from "./liveness.ts";
import { loadSnapshot } from "./load-snapshot.ts";
import type { Snapshot } from "./model.ts";
import { readManifest } from "./snapshots.ts";

export class SnapshotHolder {
  private current: Snapshot | null = null;
  private timer: NodeJS.Timeout | null = null;
  private loading: Promise<void> | null = null;
  private listeners: ((s: Snapshot) => void)[] = [];
  private lease: Heartbeat | null = null;

  constructor(
    readonly dataDir: string,
    private readonly onError: (e: unknown) => void = () => undefined,
  ) {}

  get(): Snapshot | null {
    return this.current;
  }

  onSwap(fn: (s: Snapshot) => void): void {
    this.listeners.push(fn);
  }

  /** Loads the manifest's snapshot if it is not the one served; resolves when done. */
  async refresh(): Promise<Snapshot | null> {
    if (this.loading) await this.loading;
    const m = readManifest(this.dataDir);
    if (!m || m.snapshotId === this.current?.id) return this.current;
    this.loading = (async () => {
      const lease = this.tryLease(m.snapshotId);
      let next: Snapshot;
      try {
        next = await loadSnapshot(this.dataDir, m.snapshotId);
      } catch (e) {
        lease?.stop();
        throw e;
      }
      this.current = next;
      this.lease?.stop();
      this.lease = lease;
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
