// An in-process run over a published store (and a worker's scheduled run) hashes the source
// before it starts only when the published snapshot may hold that very source
// (`mayBeBuiltFrom`): when the snapshot's record of its source's files
// (the fingerprint it was published under) differs from the source in a file's name or size, the
// bytes differ too, so the run starts at once and hashes while it works (2 s of a 7–8 s nightly
// append at 5,000 × 25).
import { appendFileSync, cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { dispatchRun } from "../../jobs/queue/dispatch.ts";
import { mayBeBuiltFrom, readSourceRecord } from "../../pipeline/sources/append-plan.ts";
import { sourceFingerprint } from "../../pipeline/sources/fingerprint.ts";
import { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { type Manifest, readManifest, snapshotDir } from "../../pipeline/store/snapshot/snapshots.ts";
import { writeTinySource } from "../fixtures/tiny-source.ts";

const silent = { info: () => undefined, warn: () => undefined };
let dataDir = "";
let source = "";
let current: Manifest;
/** `mayBeBuiltFrom` for the snapshot `m` names in `store`. */
const mayHold = (store: string, m: Pick<Manifest, "snapshotId" | "sourceId">, dir: string) =>
  mayBeBuiltFrom(snapshotDir(store, m.snapshotId), m.sourceId, dir);

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "dispatch-hash-"));
  source = writeTinySource();
  const catalog = await Catalog.open(join(dataDir, "catalog.duckdb"));
  await dispatchRun({ dataDir, sourceDir: source, catalog, log: silent, redisUrl: null });
  current = readManifest(dataDir)!;
}, 60_000);

/** A copy of the source, changed by `edit`. */
function variant(edit: (dir: string) => void): string {
  const dir = mkdtempSync(join(tmpdir(), "dispatch-hash-src-"));
  cpSync(source, dir, { recursive: true });
  edit(dir);
  return dir;
}

describe("whether a run hashes its source before it starts", () => {
  it("the published snapshot recorded the files it was published under", () => {
    const record = readSourceRecord(snapshotDir(dataDir, current.snapshotId))!;
    expect(record.map((f) => f.path)).toContain("prices.csv");
    expect(current.sourceId).toBe(sourceFingerprint(source));
  });

  it("may hold the same source, or one of the same names and sizes (only the hash can tell)", async () => {
    expect(mayHold(dataDir, current, source)).toBe(true);
    // same size, one byte changed: left to the hash, which tells them apart
    const edited = variant((d) => {
      const f = join(d, "companies.csv");
      writeFileSync(f, readFileSync(f, "utf8").replace("AAA", "AAB"));
    });
    expect(mayHold(dataDir, current, edited)).toBe(true);
    expect(sourceFingerprint(edited)).not.toBe(current.sourceId);
    // and the unchanged source is still found held, so nothing is recomputed
    const catalog = await Catalog.open(join(dataDir, "catalog.duckdb"));
    expect((await dispatchRun({ dataDir, sourceDir: source, catalog, log: silent, redisUrl: null })).skipped).toBe(
      true,
    );
  });

  it("cannot hold a source with a grown, added or removed file", () => {
    expect(
      mayHold(
        dataDir,
        current,
        variant((d) => appendFileSync(join(d, "prices.csv"), "\n")),
      ),
    ).toBe(false);
    expect(
      mayHold(
        dataDir,
        current,
        variant((d) => writeFileSync(join(d, "notes.txt"), "x")),
      ),
    ).toBe(false);
    expect(
      mayHold(
        dataDir,
        current,
        variant((d) => rmSync(join(d, "ratings.csv"))),
      ),
    ).toBe(false);
  });

  it("leaves it to the hash when the record is missing or was not made for the published fingerprint", () => {
    const grown = variant((d) => appendFileSync(join(d, "prices.csv"), "\n"));
    expect(mayHold(dataDir, { ...current, sourceId: "0123456789abcdef" }, grown)).toBe(true);
    const store = mkdtempSync(join(tmpdir(), "dispatch-hash-store-"));
    cpSync(join(dataDir, "snapshots", current.snapshotId), join(store, "snapshots", current.snapshotId), {
      recursive: true,
    });
    rmSync(join(store, "snapshots", current.snapshotId, "source_files.json"));
    expect(mayHold(store, current, grown)).toBe(true);
  });
});
