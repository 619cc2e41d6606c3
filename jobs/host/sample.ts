// The embedded default source: generated once, deterministically, when missing.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { generateSample } from "../../data/generate.ts";
import type { Log } from "../../pipeline/stages/context.ts";
import type { ProgressFn } from "./progress.ts";

/** Whether the generated sample is complete in `dir` (portfolios.json is written last). */
export const hasSample = (dir: string) =>
  existsSync(join(dir, "companies.csv")) && existsSync(join(dir, "portfolios.json"));

export async function ensureSampleSource(dir: string, log: Log, progress?: ProgressFn): Promise<string> {
  if (hasSample(dir)) return dir;
  log.info({ dir }, "generating the sample source (once; 500 companies, 15 years)");
  const r = await generateSample(dir, { progress });
  log.info({ dir, ms: r.ms }, "sample source generated");
  return dir;
}
