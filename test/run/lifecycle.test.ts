// The run's lifecycle owner (pipeline/run/lifecycle.ts): the staging folder and its heartbeat, the
// lease on the published snapshot, publish or discard, the after-publish steps; and the rule that
// every executor goes through it (publishSnapshot and takeLease called from one module each outside the store).
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { RunLifecycle } from "../../pipeline/run/lifecycle.ts";
import { leasesDir } from "../../pipeline/store/coordination/leases.ts";
import {
  ManifestMovedError,
  readManifest,
  snapshotDir,
  stagingBeat,
  stagingPath,
} from "../../pipeline/store/snapshot/snapshots.ts";
import { stagingLayout } from "../../pipeline/store/snapshot/staging-layout.ts";

const meta = (id: string) => ({
  id,
  createdAt: "2026-01-01T00:00:00.000Z",
  sourceId: `src-${id}`,
  sourceDir: "/x",
  lastPriceDate: "2024-01-01",
  counts: {},
  timingsMs: { total: 1 },
});
const leases = (dataDir: string) => (existsSync(leasesDir(dataDir)) ? readdirSync(leasesDir(dataDir)) : []);

/** A published snapshot of one file, through the owner. */
async function publishOne(dataDir: string, file = "t.bin"): Promise<string> {
  const run = RunLifecycle.open({ dataDir });
  writeFileSync(join(run.out, file), "x");
  await run.publish(meta(run.stagingId), { baseVersion: 0 });
  run.close();
  return run.stagingId;
}

describe("RunLifecycle", () => {
  it("opens a folder with its heartbeat; publishes, runs the after-publish steps in order; no leftovers", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "lifecycle-"));
    const first = await publishOne(dataDir);
    const calls: string[] = [];
    const run = RunLifecycle.open({
      dataDir,
      job: "job-7",
      afterPublish: [
        async (m, base) => void calls.push(`reapply ${m.snapshotId} since ${base}`),
        async (m) => void calls.push(`events v${m.version}`),
      ],
    });
    expect(run.out).toBe(stagingPath(dataDir, run.stagingId));
    expect(existsSync(run.out)).toBe(true);
    expect(JSON.parse(readFileSync(stagingBeat(dataDir, run.stagingId), "utf8")).job).toBe("job-7");
    const base = run.leaseBase();
    expect(base?.snapshotId).toBe(first);
    expect(run.snapshotDir(base)).toBe(snapshotDir(dataDir, first));
    expect(leases(dataDir).map((f) => f.split("~")[0])).toEqual([first]);
    writeFileSync(join(run.out, "t.bin"), "y");
    const m = await run.publish(meta(run.stagingId), { baseVersion: base!.version!, expect: first });
    // the manifest's second version, written by this publish under the job it was opened for
    expect(m.version).toBe(2);
    expect(m.log?.[0]).toMatchObject({ snapshotId: run.stagingId, job: "job-7", kind: "run" });
    expect(calls).toEqual([`reapply ${run.stagingId} since 1`, "events v2"]);
    expect(existsSync(stagingBeat(dataDir, run.stagingId))).toBe(false); // stopped at the publish
    expect(leases(dataDir)).toHaveLength(1); // held until close
    run.close();
    expect(leases(dataDir)).toEqual([]);
    expect(readdirSync(join(dataDir, "snapshots")).sort()).toEqual([first, run.stagingId].sort());
  });

  it("discards: the folder and its heartbeat go, the published snapshot is as it was", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "lifecycle-"));
    const first = await publishOne(dataDir);
    const run = RunLifecycle.open({ dataDir });
    run.leaseBase();
    run.discard();
    run.close();
    expect(existsSync(run.out)).toBe(false);
    expect(existsSync(stagingBeat(dataDir, run.stagingId))).toBe(false);
    expect(leases(dataDir)).toEqual([]);
    expect(readManifest(dataDir)?.snapshotId).toBe(first);
  });

  it("a compare-and-swap onto a moved manifest throws, runs no after-publish step, keeps the folder", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "lifecycle-"));
    const first = await publishOne(dataDir);
    let after = 0;
    const run = RunLifecycle.open({ dataDir, afterPublish: [async () => void after++] });
    const second = await publishOne(dataDir);
    const err = await run.publish(meta(run.stagingId), { baseVersion: 1, expect: first }).catch((e) => e);
    expect(err).toBeInstanceOf(ManifestMovedError);
    expect(after).toBe(0);
    expect(existsSync(run.out)).toBe(true);
    expect(readManifest(dataDir)?.snapshotId).toBe(second);
    run.discard();
    run.close();
  });

  it("a flow's folder: each job holds the shared heartbeat and leaves it; a discard removes all", () => {
    const dataDir = mkdtempSync(join(tmpdir(), "lifecycle-"));
    const job = RunLifecycle.join({ dataDir, job: "publish:v" }, "flow-v-r");
    expect(existsSync(stagingBeat(dataDir, "flow-v-r"))).toBe(false); // joining holds nothing
    job.hold();
    const beat = JSON.parse(readFileSync(stagingBeat(dataDir, "flow-v-r"), "utf8"));
    expect(beat.host).toMatch(/^flow@/); // judged by age alone: no process of a flow owns it
    job.close();
    expect(existsSync(stagingBeat(dataDir, "flow-v-r"))).toBe(true); // the next job takes it over
    const layout = stagingLayout(job.out);
    // the folder, its staging databases' scratch folder and the records a publish sets aside
    for (const d of [job.out, layout.tmp, layout.aside]) mkdirSync(d, { recursive: true });
    const last = RunLifecycle.join({ dataDir }, "flow-v-r");
    last.hold();
    last.discard();
    last.close();
    expect(existsSync(stagingBeat(dataDir, "flow-v-r"))).toBe(false);
    for (const d of [job.out, layout.tmp, layout.aside]) expect(existsSync(d)).toBe(false);
  });
});

describe("the steps' own records (.flow) are never published", () => {
  it("a run of this process drops them; a flow's publish sets them aside, put back when it fails", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "lifecycle-"));
    const own = RunLifecycle.open({ dataDir });
    mkdirSync(stagingLayout(own.out).flowDir);
    await own.publish(meta(own.stagingId), { baseVersion: 0 });
    own.close();
    const flowName = basename(stagingLayout(own.out).flowDir);
    expect(readdirSync(snapshotDir(dataDir, own.stagingId))).not.toContain(flowName);
    expect(readdirSync(snapshotDir(dataDir, own.stagingId))).toContain("meta.json");

    const flow = RunLifecycle.join({ dataDir }, "flow-a-b");
    flow.hold(); // the publish job's: prune spares the folder's siblings while it is fresh
    mkdirSync(stagingLayout(flow.out).flowDir, { recursive: true });
    writeFileSync(join(stagingLayout(flow.out).flowDir, "run.json"), "{}");
    const moved = await flow.publish(meta("s2"), { baseVersion: 0, expect: "elsewhere" }).catch((e) => e);
    expect(moved).toBeInstanceOf(ManifestMovedError);
    expect(readdirSync(stagingLayout(flow.out).flowDir)).toEqual(["run.json"]); // put back: a retry finds it
    await flow.publish(meta("s2"), { baseVersion: 0 });
    expect(readdirSync(snapshotDir(dataDir, "s2"))).not.toContain(flowName);
    expect(readdirSync(stagingLayout(flow.out).aside)).toEqual(["run.json"]); // aside until finish
    flow.finish();
    flow.close();
    expect(existsSync(stagingLayout(flow.out).aside)).toBe(false);
  });
});

describe("every executor goes through the run's owner", () => {
  const ROOT = resolve(import.meta.dirname, "../..");
  const callers = (fn: string) =>
    ["api", "jobs", "pipeline"]
      .flatMap((d) =>
        readdirSync(join(ROOT, d), { recursive: true, encoding: "utf8" })
          .filter((f) => f.endsWith(".ts"))
          .map((f) => join(d, f)),
      )
      .filter((f) => !f.startsWith(join("pipeline", "store")))
      .filter((f) => new RegExp(`\\b${fn}\\(`).test(readFileSync(join(ROOT, f), "utf8")));

  it("publishSnapshot and takeLease are called outside the store by pipeline/run/lifecycle.ts alone", () => {
    expect(callers("publishSnapshot")).toEqual([join("pipeline", "run", "lifecycle.ts")]);
    expect(callers("takeLease")).toEqual([join("pipeline", "run", "lifecycle.ts")]);
  });
});
