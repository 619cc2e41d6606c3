// The benchmark levels a partition thread or flow worker keeps between a run's partitions
// (LevelsCache, pipeline/stages/metrics-partition.ts): read once per pair of staged files, read
// again when a file is replaced (written aside and renamed: a new inode), never shared between caches.
import { mkdtempSync, renameSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { benchmarkLevels, LevelsCache } from "../../pipeline/stages/metrics-partition.ts";
import { openDuck } from "../../pipeline/store/duck/duck.ts";

let db: Awaited<ReturnType<typeof openDuck>>;
const out = mkdtempSync(join(tmpdir(), "levels-cache-"));

/** Stages two benchmarks' levels (`level`: the first one's only level), written aside and renamed as a run does. */
async function stage(level: number): Promise<void> {
  const file = (t: string) => join(out, `${t}.parquet.tmp`);
  await db.conn.run(
    `copy (select * from (values ('1', DATE '2024-01-02', $level::double), ('2', DATE '2024-01-02', 7.0), ` +
      `('2', DATE '2024-01-03', 8.0)) t(id, date, level)) to $f (format parquet)`,
    { level, f: file("benchmark_levels") },
  );
  await db.conn.run(`copy (select * from (values ('2'), ('1')) t(id)) to $f (format parquet)`, {
    f: file("benchmark_defs"),
  });
  for (const t of ["benchmark_levels", "benchmark_defs"]) renameSync(file(t), join(out, `${t}.parquet`));
}

beforeAll(async () => {
  db = await openDuck(":memory:", { threads: "1" });
  await stage(5);
});
afterAll(() => db.close());

describe("the benchmark levels cache", () => {
  it("reads the staged levels in the definitions' id order", async () => {
    const levels = await benchmarkLevels(db.conn, out);
    // by hand from stage(): ids ordered as integers, each series in date order
    expect(levels.map((l) => l.id)).toEqual(["1", "2"]);
    expect(levels[0].levels.dates).toEqual(["2024-01-02"]);
    expect([...levels[0].levels.levels]).toEqual([5]);
    expect([...levels[1].levels.levels]).toEqual([7, 8]);
  });

  it("reads once for the same files, again once a file is replaced, and each cache on its own", async () => {
    const cache = new LevelsCache();
    const first = cache.read(db.conn, out);
    expect(cache.read(db.conn, out)).toBe(first);
    expect(new LevelsCache().read(db.conn, out)).not.toBe(first);
    await first;
    await stage(6);
    const second = cache.read(db.conn, out);
    expect(second).not.toBe(first);
    expect([...(await second)[0].levels.levels]).toEqual([6]);
  });
});
