// A store with a generated source published through a real pipeline run (tests of the readers).
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateSample } from "../../data/generate.ts";
import { runPipeline } from "../../jobs/local/runner.ts";
import { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { openDuck } from "../../pipeline/store/duck/duck.ts";
import { snapshotDir } from "../../pipeline/store/snapshot/snapshots.ts";

/**
 * Generates a source (20 companies or more, 2 years or more) into a new store; `run()` publishes it and answers the
 * snapshot id.
 */
export async function generatedStore(opts: {
  companies: number;
  years: number;
  seed: number;
  tickersPerPartition?: number;
  /** Keep the generator's vendor ratings.csv (default true); false: the pipeline's factor model rates it. */
  vendorRatings?: boolean;
  /** The generator's --plant-ic: a known 12-1 momentum to next-month-return rank correlation. */
  plantIc?: number;
}): Promise<{ dataDir: string; run: () => Promise<string> }> {
  const src = mkdtempSync(join(tmpdir(), "store-src-"));
  await generateSample(src, {
    companies: opts.companies,
    years: opts.years,
    seed: opts.seed,
    vendorRatings: opts.vendorRatings ?? true,
    plantIc: opts.plantIc,
  });
  const dataDir = mkdtempSync(join(tmpdir(), "store-"));
  const catalog = await Catalog.open(join(dataDir, "catalog.duckdb"));
  const run = async () =>
    (
      await runPipeline({
        dataDir,
        sourceDir: src,
        catalog,
        log: { info: () => undefined, warn: () => undefined },
        workers: 0,
        tickersPerPartition: opts.tickersPerPartition,
      })
    ).meta.id;
  return { dataDir, run };
}

/**
 * `generatedStore` run once: its snapshot (id and folder) and a DuckDB connection for the checks, which the caller
 * closes.
 */
export async function publishedSnapshot(opts: Parameters<typeof generatedStore>[0]) {
  const store = await generatedStore(opts);
  const id = await store.run();
  return { dataDir: store.dataDir, id, dir: snapshotDir(store.dataDir, id), db: await openDuck() };
}
