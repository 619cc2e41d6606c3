// Atomic publish: a reader in another thread following the manifest never finds a missing or
// partial snapshot while snapshots are published and pruned under it.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { RunLifecycle } from "../../pipeline/run/lifecycle.ts";
import {
  KEEP_SNAPSHOTS,
  newSnapshotId,
  readManifest,
  snapshotsDir,
  stagingBeat,
} from "../../pipeline/store/snapshot/snapshots.ts";

function fakeRun(dataDir: string) {
  const id = newSnapshotId();
  // the run's owner: its folder, with the heartbeat that tells prune it is alive
  const run = RunLifecycle.open({ dataDir }, id);
  const staging = run.out;
  // A "table" big enough that a non-atomic switch would be caught half-written.
  writeFileSync(join(staging, "table.bin"), Buffer.alloc(256 * 1024, 7));
  return {
    id,
    run,
    staging,
    meta: {
      id,
      createdAt: new Date().toISOString(),
      sourceId: "s",
      sourceDir: "/x",
      lastPriceDate: "2024-01-01",
      counts: {},
      timingsMs: {},
    },
  };
}

const READER = `
const { workerData, parentPort } = require("node:worker_threads");
const fs = require("node:fs"), path = require("node:path");
let reads = 0, failures = [];
const until = Date.now() + workerData.ms;
while (Date.now() < until) {
  try {
    const m = JSON.parse(fs.readFileSync(path.join(workerData.dir, "manifest.json"), "utf8"));
    const dir = path.join(workerData.dir, "snapshots", m.snapshotId);
    const meta = JSON.parse(fs.readFileSync(path.join(dir, "meta.json"), "utf8"));
    const size = fs.statSync(path.join(dir, "table.bin")).size;
    if (meta.id !== m.snapshotId || size !== 262144) failures.push("partial " + m.snapshotId);
    reads++;
  } catch (e) {
    // A snapshot pruned between reading the manifest and opening it is the only tolerated miss:
    // the server loads a snapshot fully into memory, so it never reads files after that.
    if (!/ENOENT/.test(String(e))) failures.push(String(e));
  }
}
parentPort.postMessage({ reads, failures });
`;

describe("publishSnapshot", () => {
  it("switches atomically under concurrent reads and prunes to the newest three", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "store-"));
    const first = fakeRun(dataDir);
    await first.run.publish(first.meta, { baseVersion: 0 });
    const reader = new Worker(READER, { eval: true, workerData: { dir: dataDir, ms: 1500 } });
    const done = new Promise<{ reads: number; failures: string[] }>((res) => reader.on("message", res));
    const ids = [first.id];
    for (let i = 0; i < 30; i++) {
      const r = fakeRun(dataDir);
      await r.run.publish(r.meta, { baseVersion: 0 });
      ids.push(r.id);
      await new Promise((res) => setTimeout(res, 20));
    }
    const { reads, failures } = await done;
    expect(failures).toEqual([]);
    expect(reads).toBeGreaterThan(100);
    const m = readManifest(dataDir)!;
    expect(m.snapshotId).toBe(ids.at(-1));
    expect(m.history).toEqual(ids.slice(-KEEP_SNAPSHOTS).reverse());
    expect(readdirSync(snapshotsDir(dataDir)).sort()).toEqual([...m.history].sort());
  });

  it("a discarded run leaves the published snapshot as it was", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "store-"));
    const a = fakeRun(dataDir);
    await a.run.publish(a.meta, { baseVersion: 0 });
    const b = fakeRun(dataDir);
    b.run.discard();
    expect(readManifest(dataDir)?.snapshotId).toBe(a.id);
    expect(existsSync(b.staging)).toBe(false);
  });
  it("keeps a live run's spill folder (<staging>.tmp) and set-aside <staging>.flow; removes a dead run's", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "store-"));
    const live = fakeRun(dataDir);
    const dead = fakeRun(dataDir);
    for (const r of [live, dead]) for (const suffix of [".tmp", ".flow"]) mkdirSync(`${r.staging}${suffix}`);
    // The dead run's heartbeat: not touched for an hour, its owner long gone.
    dead.run.discard();
    mkdirSync(dead.staging);
    writeFileSync(stagingBeat(dataDir, dead.id), JSON.stringify({ host: "flow@elsewhere" }));
    const anHourAgo = new Date(Date.now() - 3_600_000);
    utimesSync(stagingBeat(dataDir, dead.id), anHourAgo, anHourAgo);
    const a = fakeRun(dataDir);
    await a.run.publish(a.meta, { baseVersion: 0 });
    const left = readdirSync(snapshotsDir(dataDir)).sort();
    expect(left).toEqual([a.id, `.staging-${live.id}`, `.staging-${live.id}.flow`, `.staging-${live.id}.tmp`].sort());
    live.run.discard();
  });
});
