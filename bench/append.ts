// `npm run bench -- append`: issue 11's "append one day to the 5,000 × 25 history in < 10 % of a
// full run". The source (SCALE_SOURCE, else a generated 300 × 8 universe) is split before its
// last trading day (data/append-days.ts); the baseline is the full run over the history, the
// figure the append run of the day after it, each in a child process of its own (peak RSS).
//   SCALE_SOURCE=DIR   the universe;   SCALE_DATA=DIR   where the split and the store go
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { splitAtDate } from "../data/append-days.ts";
import { generateSample } from "../data/generate.ts";

const CHILD = resolve(import.meta.dirname, "scale-child.ts");
const TSX = resolve(import.meta.dirname, "../node_modules/.bin/tsx");

function child(
  args: string[],
  env: Record<string, string> = {},
): { ms: number; cpuMs: number; peakMB: number; wallMs: number; timings: Record<string, number>; load: string } {
  const t = performance.now();
  const out = execFileSync(TSX, [CHILD, ...args], {
    encoding: "utf8",
    maxBuffer: 1 << 24,
    env: { ...process.env, ...env },
  });
  // the machine may be shared: the 1-minute load average when the run ended goes with its figures
  return {
    ...JSON.parse(out.trim().split("\n").at(-1)!),
    wallMs: Math.round(performance.now() - t),
    load: loadavg()[0].toFixed(1),
  };
}

/** The last date of the source's benchmarks (else prices) file: the day held back. */
function lastDay(src: string): string {
  const f = existsSync(join(src, "benchmarks.csv")) ? join(src, "benchmarks.csv") : join(src, "prices.csv");
  const text = readFileSync(f, "utf8").trimEnd();
  return text.slice(text.lastIndexOf("\n") + 1).split(",")[0];
}

const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export async function benchAppend(): Promise<void> {
  console.log("\n== append (issue 11): one new trading day on top of the published history");
  execFileSync(process.execPath, [resolve(import.meta.dirname, "../scripts/dist-fresh.mjs")], { stdio: "inherit" });
  const work = process.env.SCALE_DATA ?? mkdtempSync(join(tmpdir(), "bench-append-"));
  mkdirSync(work, { recursive: true });
  let src = process.env.SCALE_SOURCE;
  if (!src) {
    src = join(work, "source");
    await generateSample(src, { companies: 300, years: 8, vendorRatings: true });
    console.log(`SCALE_SOURCE unset: generated a 300 × 8 universe in ${src}`);
  }
  const day = lastDay(src);
  const splitDir = join(work, "append-split");
  rmSync(splitDir, { recursive: true, force: true });
  const t = performance.now();
  const split = await splitAtDate(src, splitDir, day);
  console.log(`split before ${day} in ${s(performance.now() - t)}: ${JSON.stringify(split.rows)} rows appended`);
  const store = join(work, "append-store");
  rmSync(store, { recursive: true, force: true });
  mkdirSync(store, { recursive: true });
  const full = child(["run", split.history, store]);
  const append = child(["run", split.appended, store]);
  if (!append.timings.append) throw new Error(`the second run did not append: ${JSON.stringify(append.timings)}`);
  console.log(
    `full run over the history (baseline): ${s(full.ms)} in-process, ${s(full.wallMs)} with process start, ` +
      `CPU ${s(full.cpuMs)} | load ${full.load} | peak RSS ${full.peakMB} MB | stages ${JSON.stringify(full.timings)}`,
  );
  console.log(
    `append of ${day}: ${s(append.ms)} in-process, ${s(append.wallMs)} with process start, CPU ${s(append.cpuMs)} ` +
      `= ${((100 * append.ms) / full.ms).toFixed(1)} % of the full run ` +
      `(${((100 * append.wallMs) / full.wallMs).toFixed(1)} % with process ` +
      `start, ${((100 * append.cpuMs) / full.cpuMs).toFixed(1)} % of its CPU; target < 10 %) | load ${append.load} | ` +
      `peak RSS ${append.peakMB} MB | steps ${JSON.stringify(append.timings)}`,
  );
  if (!process.env.SCALE_DATA) rmSync(work, { recursive: true, force: true });
}
