// Child process of the ratings benchmark, so each stage's peak RSS is its own process's:
//   <sourceDir> <proxies|model>   the source staged, its price panel read (as a run's frames stage
//                                 holds it), then one ratings stage timed
// Prints one JSON line: the stage's ms, and the peak RSS before and after it (MB).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDuck } from "../pipeline/store/duck/duck.ts";
import type { RatingRow } from "../pipeline/types.ts";
import { market, proxiesStage } from "./ratings.ts";
import { computeRatings, modelRatingsStage } from "./ratings-stages.ts";

const peakMB = () => Math.round(process.resourceUsage().maxRSS / 1e3);
const [source, which] = process.argv.slice(2);
const out = mkdtempSync(join(tmpdir(), "bench-ratings-stage-"));
const db = await openDuck(":memory:", { threads: "1" });
try {
  const m = await market(db.conn, source);
  const before = peakMB();
  const t = performance.now();
  const cpu = process.cpuUsage();
  if (which === "model")
    await modelRatingsStage(
      { conn: db.conn, out, log: { info: () => undefined, warn: () => undefined } },
      { ...m, ratings: [] as RatingRow[] },
      source,
    );
  else await proxiesStage(db.conn, out, m, computeRatings);
  const used = process.cpuUsage(cpu);
  const cpuMs = Math.round((used.user + used.system) / 1000);
  console.log(JSON.stringify({ ms: Math.round(performance.now() - t), cpuMs, peakBeforeMB: before, peakMB: peakMB() }));
} finally {
  db.close();
  rmSync(out, { recursive: true, force: true });
}
