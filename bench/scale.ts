// `npm run bench -- scale`: the figures of issue 11, each beside a baseline from the same run.
//   SCALE_SOURCE=/path/to/source   the big universe (e.g. `npm run generate -- --out DIR
//                                  --companies 5000 --years 25`); absent: a 300 × 8 universe is
//                                  generated into a temp folder so the section runs anywhere
//   SCALE_DATA=/path               where the stores of the runs go (default: a temp folder)
// Every run is a child process (bench/scale-child.ts) so each peak RSS is that process's own.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os, { availableParallelism, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { generateSample } from "../data/generate.ts";
import { openDuck } from "../pipeline/store/duck/duck.ts";
import type { ApiFigures } from "./api-load.ts";
import { SHARED_DATA } from "./real-source.ts";

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
  await db.conn.run("create table p as select * from read_csv($f)", { f: join(sourceDir, "prices.csv") });
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
    const [cutime, cstime] = f
      .slice(f.lastIndexOf(")") + 2)
      .split(" ")
      .slice(13, 15)
      .map(Number);
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
    console.log(
      `real source: DuckDB plain read of prices ${base} ms (baseline) | whole run ${r.ms} ms in-process, ${r.wallMs} ` +
        `ms with process start (${ratio(r.ms!, base)}; target < 5000 ms) | peak RSS ${r.peakMB} MB | ` +
        `stages ${JSON.stringify(r.timings)}`,
    );
    // The command as a data engineer types it: npm, the dist/ freshness check, the CLI's start, the run, the exit.
    const cmdDir = join(store, "real-command");
    rmSync(cmdDir, { recursive: true, force: true });
    const t = performance.now();
    const cpu0 = childrenCpuMs();
    execFileSync("npm", ["run", "--silent", "pipeline", "--", "run", "--source", real], {
      cwd: resolve(import.meta.dirname, ".."),
      env: { ...process.env, DATA_DIR: cmdDir, LOG_FORMAT: "json" },
      stdio: "ignore",
    });
    const cpu = cpu0 === null ? null : childrenCpuMs()! - cpu0;
    console.log(
      `real source, the command \`npm run pipeline -- run --source ${real}\` (fresh ` +
        `DATA_DIR): ${Math.round(performance.now() - t)} ms wall (target < 5000 ` +
        `ms)${cpu === null ? "" : `, ${cpu} ms CPU (user+sys)`}, load average ${loadavg()} ` +
        `on ${availableParallelism()} cores`,
    );
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
  console.log(
    `universe ${big}: DuckDB plain read of prices ${s(base)} (baseline) | whole run ${s(r.ms!)} ` +
      `(${ratio(r.ms!, base)}; target < 300 s at 5,000 × 25) | peak RSS ${r.peakMB} MB (target < 4096 MB) | ` +
      `counts ${JSON.stringify(r.counts)} | stages ${JSON.stringify(r.timings)}`,
  );

  const load = child(["read", dir, "load"]);
  const lazy = child(["read", dir, "lazy"]);
  console.log(`API read of that snapshot — whole in-memory loader (baseline, today's server) vs lazy reader:`);
  console.log(
    `  open ${s(load.openMs as number)} vs ${s(lazy.openMs as number)} | event-loop stall while ` +
      `opening ${load.openStallMs} ms vs ${lazy.openStallMs} ms | RSS after reads ${load.rssMB} MB ` +
      `vs ${lazy.rssMB} MB (target < 1024 MB)`,
  );
  console.log(
    `  swap under load (requests every 5 ms while the next snapshot opens): ready in ${s(load.swapMs as number)} ` +
      `vs ${s(lazy.swapMs as number)}; slowest request ${load.slowestRequestDuringSwapMs} ms ` +
      `vs ${lazy.slowestRequestDuringSwapMs} ms, longest event-loop block (what a request arriving then ` +
      `waits) ${load.swapLoopStallMs} ms vs ${lazy.swapLoopStallMs} ms (target < 100 ms)`,
  );
  for (const k of Object.keys(lazy.latency as object)) {
    const a = (load.latency as Record<string, { p50: number; p99: number }>)[k];
    const b = (lazy.latency as Record<string, { p50: number; p99: number }>)[k];
    console.log(`  ${k}: p50 ${a.p50} ms vs ${b.p50} ms, p99 ${a.p99} ms vs ${b.p99} ms`);
  }
  await apiSwap(dir);
  if (!process.env.SCALE_DATA) rmSync(store, { recursive: true, force: true });
}

/**
 * The REST API over a published store, the server (lazy reader) beside a baseline from the same
 * run, each in its own server process with this process as the load generator (bench/api-load.ts).
 *
 * The baseline: the whole in-memory snapshot (today's loader) does not finish loading 5,000 × 25
 * within 15 minutes, so it gives no figure at that scale. The default baseline is therefore the
 * lazy reader as the server had it before the cold-read work of issue 11 item 3 (commit
 * d345f8c, served from a `git archive` of it with this tree's node_modules): the same store, the
 * same requests, the same box in the same minutes. `SCALE_API_BASE=<git ref>` picks another
 * commit; `SCALE_API_BASE=load` the in-memory loader, time-boxed (`SCALE_API_TIMEBOX` seconds,
 * default 900) and reported as not finished when it does not. `SCALE_API_ROUNDS=n` (default 1)
 * repeats the pair as A B A B …: wall figures on a shared box move with the other processes, and
 * the 1-minute load average is printed beside each run.
 */
export async function apiSwap(dataDir: string): Promise<void> {
  const { measureApi, checkoutOf } = await import("./api-load.ts");
  const baseRef = process.env.SCALE_API_BASE ?? DEFAULT_API_BASE;
  const timebox = Number(process.env.SCALE_API_TIMEBOX ?? 900) * 1000;
  const rounds = Math.max(1, Number(process.env.SCALE_API_ROUNDS ?? 1));
  const checkout = baseRef === "load" ? null : checkoutOf(baseRef);
  const baseLabel = baseRef === "load" ? "in-memory snapshot" : `lazy reader at ${baseRef}`;
  try {
    for (let round = 1; round <= rounds; round++) {
      const la = loadavg();
      const a =
        baseRef === "load"
          ? await measureApi(baseLabel, dataDir, "load", undefined, timebox)
          : await measureApi(baseLabel, dataDir, "lazy", checkout!.root, timebox);
      const lb = loadavg();
      const b = await measureApi("lazy reader (this tree)", dataDir, "lazy");
      printApi(a, b, round, la, lb, loadavg());
    }
  } finally {
    checkout?.remove();
  }
}

/** The commit before the reader's cold-read work (see apiSwap). */
const DEFAULT_API_BASE = "d345f8c";
/** The 1-minute load average, printed beside wall times (the box is shared). */
const loadavg = () => os.loadavg()[0].toFixed(1);

function printApi(a: ApiFigures, b: ApiFigures, round: number, la: string, lb: string, after: string): void {
  console.log(
    `REST API over that snapshot, round ${round} — baseline: ${a.label} (1-min load ${la} at its start) ` +
      `vs ${b.label} (load ${lb} at its start, ${after} at its end; 2 cores, shared):`,
  );
  // a baseline that did not serve within its time box has no figure: "—" beside each of ours
  if (a.timedOut) console.log(`  the baseline did not serve within ${s(a.timedOut)} (its time box)`);
  const na = a.timedOut !== undefined;
  const sec = (x: ApiFigures, ms: number) => (x === a && na ? "—" : s(ms));
  const n = (x: ApiFigures, v: number | undefined) => (x === a && na ? "—" : String(v));
  const ph = (x: ApiFigures) =>
    x === a && na
      ? "—"
      : `before ${x.slowestByPhaseMs.before} / while opening ${x.slowestByPhaseMs.opening} / after the ` +
        `move ${x.slowestByPhaseMs.after} ms`;
  console.log(
    `  healthy after ${sec(a, a.openMs)} vs ${s(b.openMs)} (server CPU by then ${sec(a, a.openCpuMs)} ` +
      `vs ${s(b.openCpuMs)}) | swap ready in ${sec(a, a.swapMs)} vs ${s(b.swapMs)} (target < 10 s) | ` +
      `RSS ${n(a, a.rssMB)} vs ${b.rssMB} MB, peak ${n(a, a.peakMB)} vs ${b.peakMB} MB (target < 1024 MB) | server ` +
      `CPU over the whole run ${sec(a, a.cpuMs)} vs ${s(b.cpuMs)}`,
  );
  console.log(
    `  requests around the swap (5 endpoints at once per round, uncached bodies): ${n(a, a.requestsAroundSwap)} ` +
      `vs ${b.requestsAroundSwap}; slowest ${n(a, a.slowestAroundSwapMs)} vs ${b.slowestAroundSwapMs} ms, ` +
      `p99 ${n(a, a.p99AroundSwapMs)} vs ${b.p99AroundSwapMs} ms, over 100 ms: ${n(a, a.over100ms)} ` +
      `vs ${b.over100ms} (target: none > 100 ms)`,
  );
  const ctl = (x: ApiFigures) =>
    (x === a && na) || !x.control
      ? "—"
      : `${x.control.requests} requests, slowest ${x.control.slowestMs} ms, p99 ${x.control.p99Ms} ms, over ` +
        `100 ms: ${x.control.over100ms}`;
  console.log(`  the same load as long with no swap (control): ${ctl(a)} vs ${ctl(b)}`);
  console.log(`  slowest by when it started: ${ph(a)} vs ${ph(b)}`);
  console.log(
    `  the three slowest: ${na ? "—" : (a.slowestRequests ?? []).join("; ")} ` +
      `vs ${(b.slowestRequests ?? []).join("; ")}`,
  );
  const pc = (x: ApiFigures) =>
    x === a && na
      ? "—"
      : `${x.paced.requests} requests, slowest before ${x.paced.slowestByPhaseMs.before} / while ` +
        `opening ${x.paced.slowestByPhaseMs.opening} / after the move ${x.paced.slowestByPhaseMs.after} ms, ` +
        `p99 ${x.paced.p99Ms} ms, over 100 ms: ${x.paced.over100ms}`;
  console.log(
    `  a second swap under a paced load (one uncached request every ${b.paced.paceMs} ms, the endpoints in turn, ` +
      `open loop): ${pc(a)} vs ${pc(b)} (target: none > 100 ms)`,
  );
  console.log(
    `  server event-loop delay from the swap on: max ${n(a, a.loopMaxMs)} vs ${b.loopMaxMs} ms, ` +
      `p99 ${n(a, a.loopP99Ms)} vs ${b.loopP99Ms} ms (a sync block delays every request in flight); the load ` +
      `generator's own over the saturating phases: max ${n(a, a.clientLoopMaxMs)} vs ${b.clientLoopMaxMs} ms`,
  );
  for (const [k, y] of Object.entries(b.latency)) {
    const x = a.latency?.[k];
    console.log(
      `  ${k}: cold p50 ${n(a, x?.coldP50)} vs ${y.coldP50} ms, cold p99 ${n(a, x?.coldP99)} vs ${y.coldP99} ms, hot ` +
        `p50 ${n(a, x?.hotP50)} vs ${y.hotP50} ms | server CPU per cold request ${n(a, x?.cpuMs)} vs ${y.cpuMs} ms`,
    );
  }
}

/**
 * `SCALE_STORE=DIR npm run bench -- scale-api`: only the API figures, over an already published
 * store: `npm start` over it (bench/scale-start.ts), then the swap figures (apiSwap).
 * `SCALE_API_ONLY=start` or `=swap` runs one of the two.
 */
export async function benchScaleApi(): Promise<void> {
  const dir = process.env.SCALE_STORE;
  if (!dir) throw new Error("SCALE_STORE=DIR (a store with manifest.json) is required");
  const only = process.env.SCALE_API_ONLY;
  console.log(`\n== scale (issue 11): the API over ${dir}; note: wall figures on a shared box`);
  if (only !== "swap") await (await import("./scale-start.ts")).benchScaleStart(dir);
  if (only !== "start") await apiSwap(dir);
}

if (import.meta.url === `file://${process.argv[1]}`) await benchScale();
