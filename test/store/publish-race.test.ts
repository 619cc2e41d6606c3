// Publishing from several processes at once: every publish lands in the manifest's log with its own
// version (the lock serialises them; without it two would read the same manifest and one update
// would be lost), compare-and-swap refuses a stale base, and prune spares what is leased or alive.
import { execFile, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { RunLifecycle } from "../../pipeline/run/lifecycle.ts";
import { leasesDir, takeLease } from "../../pipeline/store/coordination/leases.ts";
import { withPublishLock } from "../../pipeline/store/coordination/publish-lock.ts";
import {
  KEEP_SNAPSHOTS,
  ManifestMovedError,
  newSnapshotId,
  readManifest,
  snapshotDir,
  snapshotsDir,
} from "../../pipeline/store/snapshot/snapshots.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const TSX = join(ROOT, "node_modules/.bin/tsx");
// The holder runs in node itself (tsx's loader), not under the tsx wrapper: SIGKILL must hit the process that holds the
// heartbeat.
const NODE_TS = [process.execPath, "--import", "tsx"] as const;
const ENTRY = join(ROOT, "test/store/publisher-entry.ts");

function fake(dataDir: string, tag = "t") {
  const id = `${newSnapshotId()}-${tag}`;
  const run = RunLifecycle.open({ dataDir }, id);
  const staging = run.out;
  writeFileSync(join(staging, "table.bin"), Buffer.alloc(1024, 3));
  return {
    id,
    run,
    staging,
    meta: {
      id,
      createdAt: new Date().toISOString(),
      sourceId: tag,
      sourceDir: "/x",
      lastPriceDate: "2024-01-01",
      counts: {},
      timingsMs: {},
    },
  };
}

describe("concurrent publishers", () => {
  it("two processes publishing at once lose no update and delete no kept snapshot", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "race-"));
    const run = (tag: string) =>
      promisify(execFile)(TSX, [ENTRY, dataDir, "15", tag], { cwd: ROOT }).then(
        (r) => JSON.parse(r.stdout.trim().split("\n").at(-1)!) as string[],
      );
    const [a, b] = await Promise.all([run("a"), run("b")]);
    const m = readManifest(dataDir)!;
    expect(m.version).toBe(30);
    // Versions 30..1, each publish once: a lost update would leave a gap or a repeat.
    expect(m.log!.slice(0, 30).map((e) => e.version)).toEqual(Array.from({ length: 30 }, (_, i) => 30 - i));
    expect(new Set(m.log!.map((e) => e.snapshotId))).toEqual(new Set([...a, ...b]));
    expect(m.history).toEqual(m.log!.slice(0, KEEP_SNAPSHOTS).map((e) => e.snapshotId));
    for (const id of m.history) expect(existsSync(join(snapshotDir(dataDir, id), "table.bin"))).toBe(true);
    expect(readdirSync(snapshotsDir(dataDir)).sort()).toEqual([...m.history].sort());
  }, 120_000);

  it("a publisher in another process waits while the lock is held, and takes over a dead holder's lock", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "lock-"));
    let child: Promise<string[]> | null = null;
    await withPublishLock(dataDir, async () => {
      child = promisify(execFile)(TSX, [ENTRY, dataDir, "1", "w"], { cwd: ROOT }).then(
        (r) => JSON.parse(r.stdout.trim().split("\n").at(-1)!) as string[],
      );
      await new Promise((res) => setTimeout(res, 4000)); // ample time for the child to start and try
      expect(readManifest(dataDir)).toBeNull();
    });
    const [id] = await child!;
    expect(readManifest(dataDir)!.snapshotId).toBe(id);
    // A lock left by a publisher that died (not refreshed for a minute) is taken over.
    mkdirSync(join(dataDir, "locks", "publish.lock"));
    utimesSync(join(dataDir, "locks", "publish.lock"), new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    const r = fake(dataDir, "after");
    await r.run.publish(r.meta, { waitMs: 5_000, baseVersion: 0 });
    expect(readManifest(dataDir)!.snapshotId).toBe(r.id);
  }, 60_000);

  it("compare-and-swap refuses a base that moved and publishes nothing", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "cas-"));
    const x = fake(dataDir, "x");
    await x.run.publish(x.meta, { expect: null, baseVersion: 0 });
    const y = fake(dataDir, "y");
    await y.run.publish(y.meta, { expect: x.id, baseVersion: 0 });
    const stale = fake(dataDir, "stale");
    const err = await stale.run.publish(stale.meta, { expect: x.id, baseVersion: 0 }).catch((e) => e);
    expect(err).toBeInstanceOf(ManifestMovedError);
    expect(err.message).toContain(`moved from ${x.id} to ${y.id}`);
    expect(readManifest(dataDir)!.snapshotId).toBe(y.id);
    expect(existsSync(stale.staging)).toBe(true); // the caller's to discard or recompute
  });

  it("prune keeps a leased snapshot and a live run's staging, and removes them once dead", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "prune-"));
    const first = fake(dataDir, "first");
    await first.run.publish(first.meta, { baseVersion: 0 });
    const lease = takeLease(dataDir, first.id);
    // A run in another process, alive with its staging folder.
    const holder = spawn(NODE_TS[0], [...NODE_TS.slice(1), ENTRY, dataDir, "0", "h", "hold"], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "inherit"],
    });
    const stagingId = await new Promise<string>((res) =>
      holder.stdout!.on("data", (d) => /READY (\S+)/.test(String(d)) && res(/READY (\S+)/.exec(String(d))![1])),
    );
    // Another machine's lease, refreshed long ago: dead.
    mkdirSync(leasesDir(dataDir), { recursive: true });
    const remote = join(leasesDir(dataDir), `${first.id}~elsewhere-1-abc.alive`);
    writeFileSync(remote, JSON.stringify({ host: "elsewhere", pid: 1, startedAt: "" }));
    utimesSync(remote, new Date(Date.now() - 600_000), new Date(Date.now() - 600_000));
    for (let i = 0; i < KEEP_SNAPSHOTS + 1; i++) {
      const r = fake(dataDir, `n${i}`);
      await r.run.publish(r.meta, { baseVersion: 0 });
    }
    expect(readManifest(dataDir)!.history).not.toContain(first.id);
    expect(existsSync(snapshotDir(dataDir, first.id))).toBe(true);
    expect(existsSync(join(snapshotsDir(dataDir), `.staging-${stagingId}`))).toBe(true);
    expect(existsSync(remote)).toBe(false);

    lease.stop();
    holder.kill("SIGKILL");
    await new Promise((res) => holder.once("exit", res));
    const last = fake(dataDir, "last");
    await last.run.publish(last.meta, { baseVersion: 0 });
    expect(existsSync(snapshotDir(dataDir, first.id))).toBe(false);
    expect(existsSync(join(snapshotsDir(dataDir), `.staging-${stagingId}`))).toBe(false);
    expect(readdirSync(join(dataDir, "locks")).filter((f) => f.startsWith("staging-"))).toEqual([]);
    expect(readdirSync(snapshotsDir(dataDir)).sort()).toEqual([...readManifest(dataDir)!.history].sort());
  }, 60_000);
});
