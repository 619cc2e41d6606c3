// One run's lifecycle, owned here for every executor (the inline runner, a rebalance, each job of a
// BullMQ flow): the staging folder and its heartbeat, the lease on the published snapshot the run
// reads, the publish (compare-and-swap when asked) or the discard, and the steps after a publish
// (re-applied rebalances, events: the executor's, handed in). Outside the store, publishSnapshot and
// takeLease are called here alone, and the store's staging paths stay pure paths.
import { existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { hostname } from "node:os";
import { takeLease } from "../store/coordination/leases.ts";
import { type Heartbeat, startHeartbeat } from "../store/coordination/liveness.ts";
import {
  discardStaging,
  type Manifest,
  newSnapshotId,
  type PublishOptions,
  publishSnapshot,
  readManifest,
  type SnapshotMeta,
  snapshotDir,
} from "../store/snapshot/snapshots.ts";
import { stagingBeat, stagingLayout, stagingPath } from "../store/snapshot/staging-layout.ts";

/** A step once a run is published: `baseVersion` is the manifest version the run read its inputs at. */
export type AfterPublishStep = (published: Manifest, baseVersion: number) => Promise<unknown>;

export interface LifecycleOptions {
  dataDir: string;
  /** The BullMQ job on whose behalf the folder is held: recorded with its heartbeat and its publish. */
  job?: string;
  /** Where "snapshot published" is logged (with `publish`'s `logged` fields). */
  log?: { info(o: object, m: string): void };
  /** What follows a publish, in order; each handles its own failures (the run is published either way). */
  afterPublish?: AfterPublishStep[];
}

/** How a run publishes: the store's options, the manifest version its inputs were read at, and its log fields. */
export type PublishAs = Omit<PublishOptions, "job"> & { baseVersion: number; logged?: Record<string, unknown> };

export class RunLifecycle {
  readonly out: string;
  private beat: Heartbeat | null = null;
  private lease: Heartbeat | null = null;

  private constructor(
    private readonly opts: LifecycleOptions,
    readonly stagingId: string,
    /** A flow's folder is shared by its jobs: each holds the heartbeat while it runs and leaves it after. */
    private readonly shared: boolean,
  ) {
    this.out = stagingPath(opts.dataDir, stagingId);
  }

  /**
   * A new staging folder of a run in this process (its id is the snapshot's): the heartbeat first,
   * so prune never takes the folder for a dead run's.
   */
  static open(opts: LifecycleOptions, id = newSnapshotId()): RunLifecycle {
    const run = new RunLifecycle(opts, id, false);
    run.beat = startHeartbeat(stagingBeat(opts.dataDir, id), { job: opts.job });
    mkdirSync(run.out, { recursive: true });
    return run;
  }

  /** A flow's staging folder, named by the flow (its first job creates it); nothing held until `hold`. */
  static join(opts: LifecycleOptions, stagingId: string): RunLifecycle {
    return new RunLifecycle(opts, stagingId, true);
  }

  /**
   * Keeps a flow's heartbeat fresh while this job runs. It names no process (a flow has many, on many
   * machines: host "flow@…"), so prune judges it by age alone; recreated if pruned under a long stall,
   * but not after the publish moved the folder away.
   */
  hold(): void {
    this.beat = startHeartbeat(stagingBeat(this.opts.dataDir, this.stagingId), {
      job: this.opts.job,
      host: `flow@${hostname()}`,
      whileExists: this.out,
    });
  }

  /** The published manifest, its snapshot leased until `close` (prune spares what the run reads); null: none. */
  leaseBase(): Manifest | null {
    const base = readManifest(this.opts.dataDir);
    if (base) this.leaseSnapshot(base.snapshotId);
    return base;
  }

  /** Leases snapshot `id` (one lease at a time: an earlier one ends). */
  leaseSnapshot(id: string): void {
    this.releaseLease();
    this.lease = takeLease(this.opts.dataDir, id);
  }

  releaseLease(): void {
    this.lease?.stop();
    this.lease = null;
  }

  /** The folder of the snapshot `m` names (what a run reads from the published snapshot). */
  snapshotDir(m: Manifest | null): string | undefined {
    return m ? snapshotDir(this.opts.dataDir, m.snapshotId) : undefined;
  }

  /**
   * Publishes the folder as `meta`'s snapshot (a moved manifest under `expect` throws ManifestMovedError
   * and leaves the folder), then runs the after-publish steps. The steps' own records (`.flow`) are
   * never published: a run of this process drops them; a flow sets them aside, where a retry of its
   * publish finds them (put back when the publish fails). A flow's heartbeat stays until `finish`.
   */
  async publish(meta: SnapshotMeta, as: PublishAs): Promise<Manifest> {
    const { baseVersion, logged, ...store } = as;
    const { flowDir, aside } = stagingLayout(this.out);
    if (this.shared) {
      rmSync(aside, { recursive: true, force: true });
      renameSync(flowDir, aside);
    } else rmSync(flowDir, { recursive: true, force: true });
    let manifest: Manifest;
    try {
      manifest = await publishSnapshot(this.opts.dataDir, this.out, meta, { ...store, job: this.opts.job });
    } catch (e) {
      if (this.shared) this.restoreAside();
      throw e;
    }
    if (!this.shared) this.stopBeat();
    if (logged) this.opts.log?.info({ snapshot: meta.id, ...logged, timingsMs: meta.timingsMs }, "snapshot published");
    await this.afterPublish(manifest, baseVersion);
    return manifest;
  }

  /** A flow's records back in its folder after a publish that did not happen (no-op when in place). */
  restoreAside(): void {
    const { flowDir, aside } = stagingLayout(this.out);
    if (existsSync(this.out) && !existsSync(flowDir) && existsSync(aside)) renameSync(aside, flowDir);
  }

  /** The after-publish steps alone (a flow's publish job retried after its publish succeeded). */
  async afterPublish(published: Manifest, baseVersion: number): Promise<void> {
    for (const step of this.opts.afterPublish ?? []) await step(published, baseVersion);
  }

  /** Publishes nothing: the folder, its set-aside files and its heartbeat go. */
  discard(): void {
    discardStaging(this.out);
    rmSync(stagingLayout(this.out).aside, { recursive: true, force: true });
    if (this.shared) this.finish();
    else this.stopBeat();
  }

  /**
   * A flow's every job done (published or discarded): the scratch files of its staging databases,
   * the records set aside for a retry (last but the heartbeat), the heartbeat.
   */
  finish(): void {
    const layout = stagingLayout(this.out);
    rmSync(layout.tmp, { recursive: true, force: true });
    rmSync(layout.aside, { recursive: true, force: true });
    this.beat?.pause();
    rmSync(stagingBeat(this.opts.dataDir, this.stagingId), { force: true });
  }

  /**
   * The lease ends. A run of this process: its heartbeat too, and its staging database's scratch files.
   * A flow's job: the heartbeat is left to the next job.
   */
  close(): void {
    this.releaseLease();
    if (this.shared) {
      this.beat?.pause();
      return;
    }
    this.stopBeat();
    rmSync(stagingLayout(this.out).tmp, { recursive: true, force: true });
  }

  private stopBeat(): void {
    this.beat?.stop();
    this.beat = null;
  }
}
