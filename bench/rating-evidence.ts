// `npm run bench -- rating-evidence`: the rating evidence step (pipeline/stages/evidence.ts) on the
// real S&P 500 source (../shared/data/real-source or EVIDENCE_BENCH_SOURCE, with its vendor
// ratings.csv) and on the generated sample (500 × 15), each published first by the inline pipeline.
// The step is timed alone on the published snapshot (computeEvidence, one DuckDB thread; wall and CPU
// of five runs) beside the baseline of the whole run that published it. Target (issue #42): under
// 1 s on the real source.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateSample } from "../data/generate.ts";
import { runPipeline } from "../jobs/local/runner.ts";
import { computeEvidence } from "../pipeline/stages/evidence.ts";
import { Catalog } from "../pipeline/store/catalog/catalog.ts";
import { openDuck } from "../pipeline/store/duck/duck.ts";
import { snapshotDir } from "../pipeline/store/snapshot/snapshots.ts";
import { SHARED_DATA } from "./real-source.ts";

const silent = { info: () => undefined, warn: () => undefined };
/** The 1-minute load average (Linux), for reading the figures: other work on the cores moves them. */
function load(): string {
  try {
    return readFileSync("/proc/loadavg", "utf8").split(" ")[0];
  } catch {
    return "?";
  }
}

async function measure(label: string, sourceDir: string): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), "bench-evidence-"));
  try {
    const catalog = await Catalog.open(join(dataDir, "catalog.duckdb"));
    const { meta } = await runPipeline({ dataDir, sourceDir, catalog, log: silent });
    const dir = snapshotDir(dataDir, meta.id);
    const db = await openDuck(":memory:", { threads: "1" });
    const runs: { wall: number; cpu: number }[] = [];
    try {
      for (let i = 0; i < 5; i++) {
        const t = performance.now();
        const c = process.cpuUsage();
        await computeEvidence(db.conn, dir);
        const used = process.cpuUsage(c);
        runs.push({ wall: performance.now() - t, cpu: (used.user + used.system) / 1000 });
      }
    } finally {
      db.close();
    }
    const ms = (xs: number[]) => xs.map((x) => Math.round(x).toLocaleString("en-US")).join(", ");
    console.log(
      `${label}: ${meta.counts.ratings?.toLocaleString("en-US")} rating rows; the run that published it ` +
        `${meta.timingsMs.total?.toLocaleString("en-US")} ms (baseline); the evidence alone, wall ms ` +
        `${ms(runs.map((r) => r.wall))}, CPU ms ${ms(runs.map((r) => r.cpu))} (load average ${load()})`,
    );
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function benchRatingEvidence(): Promise<void> {
  // the shared data beside the checkout (a worktree elsewhere names it: EVIDENCE_BENCH_SOURCE=DIR)
  const real = process.env.EVIDENCE_BENCH_SOURCE ?? join(SHARED_DATA, "real-source");
  if (existsSync(real)) await measure("real S&P 500 source (target < 1,000 ms)", real);
  else console.log(`rating-evidence: no ${real}; the real source skipped`);
  const src = mkdtempSync(join(tmpdir(), "bench-evidence-src-"));
  try {
    await generateSample(src, {});
    await measure("the sample (500 × 15)", src);
  } finally {
    rmSync(src, { recursive: true, force: true });
  }
}
