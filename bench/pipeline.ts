// Ingest+publish and whole-pipeline time on the real S&P 500 file (and on the generated sample),
// beside a baseline measured in the same run: DuckDB reading the same CSV into a typed table.
import { mkdtempSync, readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateSample } from "../data/generate.ts";
import { runPipeline } from "../jobs/local/runner.ts";
import { RunLifecycle } from "../pipeline/run/lifecycle.ts";
import { stageSource } from "../pipeline/sources/index.ts";
import { Catalog } from "../pipeline/store/catalog/catalog.ts";
import { openDuck } from "../pipeline/store/duck/duck.ts";
import { exportParquet } from "../pipeline/store/duck/write.ts";
import { snapshotDir } from "../pipeline/store/snapshot/snapshots.ts";
import { buildRealSource, hasRealData, SHARED_DATA } from "./real-source.ts";

const silent = { info: () => undefined, warn: () => undefined };
const ms = (t: number) => `${(performance.now() - t).toFixed(0)} ms`;

function duSize(dir: string): number {
  return readdirSync(dir).reduce((a, f) => a + statSync(join(dir, f)).size, 0);
}

async function baselineRead(file: string): Promise<number> {
  const db = await openDuck();
  const t = performance.now();
  await db.conn.run(`create table p as select * from read_csv('${file}')`);
  const took = performance.now() - t;
  db.close();
  return took;
}

/** Ingest and publish only: validation, typed tables, Parquet, manifest switch. */
async function ingestAndPublish(sourceDir: string): Promise<{ ms: number; bytes: number }> {
  const dataDir = mkdtempSync(join(tmpdir(), "bench-ingest-"));
  const t = performance.now();
  const db = await openDuck();
  const s = await stageSource(db.conn, sourceDir);
  if (s.rejectCount) throw new Error(`rejected: ${s.rejects[0]?.reason}`);
  const run = RunLifecycle.open({ dataDir });
  const { stagingId: id, out } = run;
  for (const table of s.tables) await exportParquet(db.conn, table, out);
  await run.publish(
    {
      id,
      createdAt: "",
      sourceId: "",
      sourceDir,
      lastPriceDate: "",
      counts: {},
      timingsMs: {},
    },
    { baseVersion: 0 },
  );
  run.close();
  const took = performance.now() - t;
  db.close();
  return { ms: took, bytes: duSize(snapshotDir(dataDir, id)) };
}

async function wholePipeline(sourceDir: string) {
  const dataDir = mkdtempSync(join(tmpdir(), "bench-run-"));
  const catalog = await Catalog.open(join(dataDir, "catalog.duckdb"));
  const t = performance.now();
  const { meta } = await runPipeline({ dataDir, sourceDir, catalog, log: silent });
  return { ms: performance.now() - t, meta, bytes: duSize(snapshotDir(dataDir, meta.id)) };
}

export async function benchPipeline(): Promise<void> {
  console.log("\n== pipeline: ingest + publish, whole run");
  if (hasRealData()) {
    const src = buildRealSource(mkdtempSync(join(tmpdir(), "bench-real-")));
    const base = await baselineRead(join(SHARED_DATA, "all_stocks_5yr.csv"));
    const ing = await ingestAndPublish(src);
    console.log(
      `real all_stocks_5yr.csv (619,040 rows): DuckDB plain read ${base.toFixed(0)} ms (baseline) | ` +
        `ingest+validate+publish ${ing.ms.toFixed(0)} ms (${(ing.ms / base).toFixed(1)}x baseline; target < 2000 ms) ` +
        `| snapshot ${(ing.bytes / 1e6).toFixed(1)} MB`,
    );
    const run = await wholePipeline(src);
    console.log(
      `real whole pipeline (computed ratings, 1 benchmark): ${run.ms.toFixed(0)} ms (target < 5000 ms) ` +
        `stages ${JSON.stringify(run.meta.timingsMs)} | snapshot ${(run.bytes / 1e6).toFixed(1)} MB`,
    );
  } else console.log("../shared/data absent: real-file figures skipped");
  const sample = mkdtempSync(join(tmpdir(), "bench-sample-"));
  const t = performance.now();
  await generateSample(sample);
  console.log(`sample source generated (500 companies × 15 years) in ${ms(t)} (target < 15000 ms)`);
  const run = await wholePipeline(sample);
  console.log(
    `sample whole pipeline: ${run.ms.toFixed(0)} ms stages ${JSON.stringify(run.meta.timingsMs)} | ` +
      `snapshot ${(run.bytes / 1e6).toFixed(1)} MB`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) await benchPipeline();
