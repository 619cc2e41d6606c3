// The embedded default source: generated once, deterministically, when missing.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { generateSample } from "../data/generate.ts";
import type { Log } from "../pipeline/stages/context.ts";

export async function ensureSampleSource(dir: string, log: Log): Promise<string> {
  if (existsSync(join(dir, "companies.csv")) && existsSync(join(dir, "portfolios.json"))) return dir;
  const r = await generateSample(dir);
  log.info({ dir, ms: r.ms }, "sample source generated");
  return dir;
}
