// The manifest and a snapshot's meta.json are read through their zod schemas
// (pipeline/store/snapshot/snapshots.ts): a file of another shape is a staging_record_corrupt error naming
// the file and the field, not a wrong value inside a run or the server. The good records are the
// shapes publishSnapshot writes (test/store/publish.test.ts publishes the same meta).
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { manifestPath, readManifest, readMeta, snapshotDir } from "../../pipeline/store/snapshot/snapshots.ts";
import { StagingRecordError } from "../../pipeline/store/snapshot/staging-layout.ts";

const manifest = {
  snapshotId: "s1",
  sourceId: "src",
  publishedAt: "2024-01-01T00:00:00.000Z",
  history: ["s1"],
  version: 3,
  log: [{ version: 3, snapshotId: "s1", kind: "run", publishedAt: "2024-01-01T00:00:00.000Z" }],
};
const meta = {
  id: "s1",
  createdAt: "2024-01-01T00:00:00.000Z",
  sourceId: "src",
  sourceDir: "/src",
  lastPriceDate: "2024-01-05",
  counts: { companies: 3 },
  timingsMs: { total: 12 },
};

function store(m: unknown, x: unknown): string {
  const dataDir = mkdtempSync(join(tmpdir(), "snapshot-records-"));
  writeFileSync(manifestPath(dataDir), typeof m === "string" ? m : JSON.stringify(m));
  mkdirSync(snapshotDir(dataDir, "s1"), { recursive: true });
  writeFileSync(join(snapshotDir(dataDir, "s1"), "meta.json"), JSON.stringify(x));
  return dataDir;
}

describe("the manifest and meta.json", () => {
  it("read as written", () => {
    const dataDir = store(manifest, meta);
    expect(readManifest(dataDir)).toEqual(manifest);
    expect(readMeta(dataDir, "s1")).toEqual(meta);
  });

  it("a manifest that is not JSON reads as none (as before); one of another shape names its field", () => {
    expect(readManifest(store("{", meta))).toBeNull();
    const dataDir = store({ ...manifest, history: "s1" }, meta);
    expect(() => readManifest(dataDir)).toThrow(StagingRecordError);
    expect(() => readManifest(dataDir)).toThrow(/manifest\.json is corrupt \(history: /);
  });

  it("a meta.json of another shape names its file and field", () => {
    const dataDir = store(manifest, { ...meta, counts: { companies: "3" } });
    expect(() => readMeta(dataDir, "s1")).toThrow(/meta\.json is corrupt \(counts\.companies: /);
  });
});
