// vitest globalSetup (fast project): generates a sample source and publishes it through a real
// pipeline run once for the whole run, instead of once per file. The read-only suites open the
// same snapshot (test/sample.ts); a suite that renames, deletes or adds files in a store, or writes
// its catalog, builds its own with test/store/published.ts.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { generateSample } from "../data/generate.ts";
import { runPipeline } from "../jobs/local/runner.ts";
import { Catalog } from "../pipeline/store/catalog/catalog.ts";

/** The published sample: its options (test/sample.ts's readers may check them) and where it is. */
export interface SampleStore {
  companies: number;
  years: number;
  seed: number;
  vendorRatings: boolean;
  dataDir: string;
  id: string;
}

declare module "vitest" {
  export interface ProvidedContext {
    sampleStore: SampleStore;
  }
}

/**
 * 20 companies over 2 years (seed 5) with the generator's vendor ratings.csv: what the API and reader
 * suites asked of test/store/published.ts each on their own.
 */
export const SAMPLE = { companies: 20, years: 2, seed: 5, vendorRatings: true } as const;

export default async function setup(project: TestProject): Promise<() => void> {
  const root = mkdtempSync(join(tmpdir(), "sample-store-"));
  const sourceDir = join(root, "source");
  const dataDir = join(root, "store");
  for (const d of [sourceDir, dataDir]) mkdirSync(d);
  await generateSample(sourceDir, SAMPLE);
  const catalog = await Catalog.open(join(dataDir, "catalog.duckdb"));
  try {
    const log = { info: () => undefined, warn: () => undefined };
    const { meta } = await runPipeline({ dataDir, sourceDir, catalog, log, workers: 0 });
    project.provide("sampleStore", { ...SAMPLE, dataDir, id: meta.id });
  } finally {
    await catalog.close();
  }
  return () => rmSync(root, { recursive: true, force: true });
}
