// `npm run bench -- scale`: the figures of issue 11, each beside a baseline from the same run.
//   SCALE_SOURCE=/path/to/source   the big universe (e.g. `npm run generate -- --out DIR
//                                  --companies 5000 --years 25`); absent: a 300 × 8 universe is
//                                  generated into a temp folder so the section runs anywhere
//   SCALE_DATA=/path               where the stores of the runs go (default: a temp folder)
// Every run is a child process (bench/scale-child.ts) so each peak RSS is that process's own.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { generateSample } from "../data/generate.ts";
import { openDuck, lit } from "../pipeline/store/duck.ts";
import { SHARED_DATA } from "./real-source.ts";
import { existsSync } from "node:fs";

const CHILD = resolve(import.meta.dirname, "scale-child.ts");
const TSX = resolve(import.meta.dirname, "../node_modules/.bin/tsx");

function child(args: string[]): Record<string, unknown> & { ms?: number; peakMB?: number } {
  const t = performance.now();
  const out = execFileSync(TSX, [CHILD, ...args], { encoding: "utf8", maxBuffer: 1 << 24, env: process.env });
  const line = out.trim().split("\n").at(-1)!;
  return { ...JSON.parse(line), wallMs: Math.round(performance.now() - t) };
}

/** Baseline: DuckDB reading the source's price file into a typed table (the floor of any run). */
async function plainRead(sourceDir: string): Promise<number> {
  const db = await openDuck();
  const t = performance.now();
  await db.conn.run(`create table p as select * from read_csv(${lit(join(sourceDir, "prices.csv"))})`);
  const ms = performance.now() - t;
  db.close();
  return Math.round(ms);
}

/**
 * User + system CPU of this process's finished children (Linux /proc; null elsewhere): on a shared
 * machine the wall time of a run says as much about the neighbours as about the run.
 */
function childrenCpuMs(): number | null {
  try {
    const f = readFileSync("/proc/self/stat", "utf8");
    const [cutime, cstime] = f.slice(f.lastIndexOf(")") + 2).split(" ").slice(13, 15).map(Number);
    return Math.round(((cutime + cstime) * 1000) / 100); // clock ticks: USER_HZ is 100 on Linux
  } catch {
    return null;
  }
}

const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const ratio = (x: number, base: number) => `${(x / base).toFixed(1)}× baseline`;

export async function benchScale(): Promise<void> {
  console.log("\n== scale (issue 11): partitioned pipeline, lazy reader; note: wall figures on a shared box");
  // Runs use the compiled runner, as `npm run pipeline` does (SCALE_FROM_SOURCES=1: the sources).
  execFileSync(process.execPath, [resolve(import.meta.dirname, "../scripts/dist-fresh.mjs")], { stdio: "inherit" });
  const store = process.env.SCALE_DATA ?? mkdtempSync(join(tmpdir(), "bench-scale-"));
  mkdirSync(store, { recursive: true });

  const real = join(SHARED_DATA, "real-source");
  if (existsSync(real)) {
    const base = await plainRead(real);
    const dir = join(store, "real");
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const r = child(["run", real, dir]);
    console.log(`real source: DuckDB plain read of prices ${base} ms (baseline) | whole run ${r.ms} ms in-process, ${r.wallMs} ms with process start (${ratio(r.ms!, base)}; target < 5000 ms) | peak RSS ${r.peakMB} MB | stages ${JSON.stringify(r.timings)}`);
    // The command as a data engineer types it: npm, the dist/ freshness check, the CLI's start, the run, the exit.
    const cmdDir = join(store, "real-command");
    rmSync(cmdDir, { recursive: true, force: true });
    const t = performance.now();
    const cpu0 = childrenCpuMs();
    execFileSync("npm", ["run", "--silent", "pipeline", "--", "run", "--source", real], { cwd: resolve(import.meta.dirname, ".."), env: { ...process.env, DATA_DIR: cmdDir, LOG_FORMAT: "json" }, stdio: "ignore" });
    const cpu = cpu0 === null ? null : childrenCpuMs()! - cpu0;
    console.log(`real source, the command \`npm run pipeline -- run --source ${real}\` (fresh DATA_DIR): ${Math.round(performance.now() - t)} ms wall (target < 5000 ms)${cpu === null ? "" : `, ${cpu} ms CPU (user+sys)`}, load average ${loadavg()[0].toFixed(2)} on ${availableParallelism()} cores`);
  } else console.log("real source absent (../shared/data/real-source): skipped");

  let big = process.env.SCALE_SOURCE;
  if (!big) {
    big = mkdtempSync(join(tmpdir(), "bench-scale-src-"));
    await generateSample(big, { companies: 300, years: 8 });
    console.log(`SCALE_SOURCE unset: generated a 300 × 8 universe in ${big}`);
  }
  const base = await plainRead(big);
  const dir = join(store, "big");
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const r = child(["run", big, dir]);
  console.log(`universe ${big}: DuckDB plain read of prices ${s(base)} (baseline) | whole run ${s(r.ms!)} (${ratio(r.ms!, base)}; target < 300 s at 5,000 × 25) | peak RSS ${r.peakMB} MB (target < 4096 MB) | counts ${JSON.stringify(r.counts)} | stages ${JSON.stringify(r.timings)}`);

  const load = child(["read", dir, "load"]);
  const lazy = child(["read", dir, "lazy"]);
  console.log(`API read of that snapshot — whole in-memory loader (baseline, today's server) vs lazy reader:`);
  console.log(`  open ${s(load.openMs as number)} vs ${s(lazy.openMs as number)} | event-loop stall while opening ${load.openStallMs} ms vs ${lazy.openStallMs} ms | RSS after reads ${load.rssMB} MB vs ${lazy.rssMB} MB (target < 1024 MB)`);
  console.log(`  swap under load (requests every 5 ms while the next snapshot opens): ready in ${s(load.swapMs as number)} vs ${s(lazy.swapMs as number)}; slowest request ${load.slowestRequestDuringSwapMs} ms vs ${lazy.slowestRequestDuringSwapMs} ms, longest event-loop block (what a request arriving then waits) ${load.swapLoopStallMs} ms vs ${lazy.swapLoopStallMs} ms (target < 100 ms)`);
  for (const k of Object.keys(lazy.latency as object)) {
    const a = (load.latency as Record<string, { p50: number; p99: number }>)[k];
    const b = (lazy.latency as Record<string, { p50: number; p99: number }>)[k];
    console.log(`  ${k}: p50 ${a.p50} ms vs ${b.p50} ms, p99 ${a.p99} ms vs ${b.p99} ms`);
  }
  apiSwap(dir);
  if (!process.env.SCALE_DATA) rmSync(store, { recursive: true, force: true });
}

const API_SWAP = resolve(import.meta.dirname, "api-swap.ts");
/** The REST API over a published store: whole in-memory snapshot (baseline) vs the lazy reader the server holds. */
function apiSwap(dataDir: string): void {
  const one = (how: string) => JSON.parse(execFileSync(TSX, [API_SWAP, dataDir, how], { encoding: "utf8", maxBuffer: 1 << 24 }).trim().split("\n").at(-1)!);
  const [a, b] = [one("load"), one("lazy")];
  console.log(`REST API over that snapshot — in-memory snapshot (baseline) vs lazy reader (what the server holds):`);
  console.log(`  healthy after ${s(a.openMs)} vs ${s(b.openMs)} | swap ready in ${s(a.swapMs)} vs ${s(b.swapMs)} (target < 10 s) | RSS ${a.rssMB} MB vs ${b.rssMB} MB, peak ${a.peakMB} vs ${b.peakMB} MB (target < 1024 MB)`);
  console.log(`  ${b.requestsAroundSwap} requests (5 endpoints, uncached bodies) around the swap: slowest ${a.slowestRequestAroundSwapMs} ms vs ${b.slowestRequestAroundSwapMs} ms, p99 ${a.p99AroundSwapMs} vs ${b.p99AroundSwapMs} ms (target: none > 100 ms)`);
  const ph = (x: { slowestByPhaseMs: Record<string, number> }) => `before ${x.slowestByPhaseMs.before} / while opening ${x.slowestByPhaseMs.opening} / after the move ${x.slowestByPhaseMs.after} ms`;
  console.log(`  slowest by when it started: ${ph(a)} vs ${ph(b)}`);
  for (const k of Object.keys(b.latency)) console.log(`  ${k}: cold p50 ${a.latency[k].coldP50} vs ${b.latency[k].coldP50} ms, cold p99 ${a.latency[k].coldP99} vs ${b.latency[k].coldP99} ms, hot p50 ${a.latency[k].hotP50} vs ${b.latency[k].hotP50} ms`);
}

/** `SCALE_STORE=DIR npm run bench -- scale-api`: only the API figures, over an already published store. */
export async function benchScaleApi(): Promise<void> {
  const dir = process.env.SCALE_STORE;
  if (!dir) throw new Error("SCALE_STORE=DIR (a store with manifest.json) is required");
  console.log(`\n== scale (issue 11): the API over ${dir}`);
  apiSwap(dir);
}

if (import.meta.url === `file://${process.argv[1]}`) await benchScale();
