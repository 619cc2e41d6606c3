// Holds the snapshot a server serves and swaps it when the manifest moves: the new snapshot is
// loaded completely before the reference changes, so no request ever sees a half-loaded one.
import { loadSnapshot } from "./load-snapshot.ts";
import type { Snapshot } from "./model.ts";
import { readManifest } from "./snapshots.ts";

export class SnapshotHolder {
  private current: Snapshot | null = null;
  private timer: NodeJS.Timeout | null = null;
  private loading: Promise<void> | null = null;
  private listeners: ((s: Snapshot) => void)[] = [];

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
      const next = await loadSnapshot(this.dataDir, m.snapshotId);
      this.current = next;
      for (const fn of this.listeners) fn(next);
    })();
    try {
      await this.loading;
    } finally {
      this.loading = null;
    }
    return this.current;
  }

  watch(intervalMs = 1000): void {
    this.timer ??= setInterval(() => this.refresh().catch(this.onError), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
