// A full disk under DATA_DIR: a tmpfs of 30 MB (mounted here, so the test needs root; CI runs as
// root) holds one published snapshot, then a filler file leaves only a little room and the run
// command is run again. Whatever it was writing when the space ran out (the staging database, a
// partition job's Parquet, a table export), it prints one line and exits 1, removes its staging
// folder and `<staging>.tmp`, and leaves the published snapshot as it was; with the room back,
// the next run publishes. Before: 8 of 14 such runs aborted natively (exit 134, Napi::Error)
// and left staging debris that failed the next run.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statfsSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readManifest, snapshotDir } from "../../pipeline/store/snapshot/snapshots.ts";
import { mediumSource, type Proc, spawnTs } from "../jobs/jobs-fixture.ts";

const MOUNT = mkdtempSync(join(tmpdir(), "full-disk-"));

/** Mounts a 30 MB tmpfs at MOUNT; false (the test is skipped) when this process may not. */
function mountTmpfs(): boolean {
  if (process.getuid?.() !== 0) return false;
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=30m", "tmpfs", MOUNT], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
const mounted = mountTmpfs();

afterAll(() => {
  if (mounted) execFileSync("umount", [MOUNT]);
  rmSync(MOUNT, { recursive: true, force: true });
});

const dataDir = join(MOUNT, "data");
const filler = join(MOUNT, "filler");
let source = "";

async function run(...extra: string[]): Promise<{ code: number | null; out: string[]; err: string[] }> {
  const p: Proc = spawnTs("jobs/cli/pipeline.ts", ["run", "--source", source, ...extra], {
    DATA_DIR: dataDir,
    REDIS_URL: "",
    SOURCE_DIR: "",
  });
  const code = await p.exited;
  return { code, out: p.out, err: p.err };
}

/** Leaves `kb` KiB free on the tmpfs. */
function leaveFree(kb: number): void {
  rmSync(filler, { force: true });
  const s = statfsSync(MOUNT);
  const free = s.bavail * s.bsize;
  execFileSync("fallocate", ["-l", String(Math.max(0, free - kb * 1024)), filler]);
}

/** Every file of a folder with its size and a hash of its bytes. */
function contents(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string, rel: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p, `${rel}${e.name}/`);
      else
        out[`${rel}${e.name}`] =
          `${statSync(p).size}:${createHash("sha1").update(readFileSync(p)).digest("hex").slice(0, 12)}`;
    }
  };
  walk(dir, "");
  return out;
}

const debris = () => [
  ...readdirSync(join(dataDir, "snapshots")).filter((n) => n.startsWith(".staging-") || n.endsWith(".tmp")),
  ...readdirSync(dataDir).filter((n) => n.endsWith(".tmp")),
];

describe.skipIf(!mounted)("a full disk under DATA_DIR (needs root to mount a tmpfs; skipped otherwise)", () => {
  beforeAll(async () => {
    source = await mediumSource();
    const first = await run();
    expect(first.code, [...first.out, ...first.err].join("\n")).toBe(0);
  }, 120_000);

  // KiB left free: the staging database's first commit, its appender, a table export, a partition
  // job's Parquet (about 4.6 to 5.4 MB free ran out there on the 60-company source).
  for (const kb of [200, 3000, 4600, 4900, 5100]) {
    it(`with ${kb} KiB free: one line, exit 1, staging removed, the published snapshot untouched`, async () => {
      const published = readManifest(dataDir)!;
      const before = contents(snapshotDir(dataDir, published.snapshotId));
      const manifestBytes = readFileSync(join(dataDir, "manifest.json"), "utf8");
      leaveFree(kb);
      const r = await run("--force");
      const said = [...r.out, ...r.err].join("\n");
      expect(r.code, said).toBe(1);
      expect(r.out, said).toEqual([]);
      expect(r.err, said).toHaveLength(1);
      expect(r.err[0]).toMatch(
        new RegExp(
          `^no space left on the store ${dataDir.replaceAll("/", "\\/")} \\(.*(No space left on device|ENOSPC).*\\); ` +
            "the run was discarded and its staging files removed; " +
            `the published snapshot is unchanged \\(${published.snapshotId}\\)$`,
        ),
      );
      expect(debris()).toEqual([]);
      expect(readFileSync(join(dataDir, "manifest.json"), "utf8")).toBe(manifestBytes);
      expect(contents(snapshotDir(dataDir, published.snapshotId))).toEqual(before);
    }, 90_000);
  }

  it("with the room back, the next run publishes", async () => {
    rmSync(filler, { force: true });
    const before = readManifest(dataDir)!.snapshotId;
    const r = await run("--force");
    expect(r.code, [...r.out, ...r.err].join("\n")).toBe(0);
    expect(readManifest(dataDir)!.snapshotId).not.toBe(before);
    expect(debris()).toEqual([]);
  }, 90_000);
});
