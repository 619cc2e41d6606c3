// Load generator of `npm run bench -- scale-api` (and of `scale` after its run): forks the server
// (bench/api-swap.ts) and measures it from this process over HTTP.
//   1. healthy after: the server's open of the published snapshot;
//   2. cold and hot latency per endpoint, one request at a time (cold: a ticker or list page not
//      asked for before; hot: the same body again, the body cache answers);
//   3. a swap under load: rounds of the five endpoints at once, each for a ticker or page nothing
//      asked for before (so no cache of the old or the new snapshot answers), a round every 5 ms
//      after the last one finished; after 1 s the server opens the next snapshot, moves its one
//      reference and goes on serving for 3 s more. Each request is kept with the phase it started
//      in: before the open, while the next snapshot opens (the old one serves), after the move. This
//      load saturates the box (the next round starts as soon as one ends, and the load generator
//      shares the two cores), so its latencies are mostly queueing, swap or not: compare the phases,
//      and the control run before it (3a: the same load as long, no swap).
//   4. a second swap under a paced load: one request every SCALE_API_PACE_MS (default 50 ms, 20 per
//      second: ~0.45 s of server CPU per second at ~22 ms per cold request), sent on time whatever the earlier
//      ones are doing (open loop), the five endpoints in turn, each for a ticker nothing asked for
//      before; the same phases, 1 s before the swap and 3 s after it: what a swap adds to a request
//      when the server is not saturated already.
// CPU time (user + sys) is the server process's own, from process.cpuUsage.
import { execFileSync, fork } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  unlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { KEYS } from "../test/api/fixture.ts";

const ROOT = resolve(import.meta.dirname, "..");
const SERVER = "bench/api-swap.ts";

export interface ApiFigures {
  label: string;
  /** Set when the server did not serve within the time box: no other figure then. */
  timedOut?: number;
  openMs: number;
  openCpuMs: number;
  swapMs: number;
  rssMB: number;
  peakMB: number;
  cpuMs: number;
  requestsAroundSwap: number;
  slowestAroundSwapMs: number;
  p99AroundSwapMs: number;
  slowestByPhaseMs: Record<"before" | "opening" | "after", number>;
  /** The three slowest requests of phase 3: path, time, when sent (relative to the move). */
  slowestRequests?: string[];
  over100ms: number;
  /** Phase 3a: the same saturating load for as long, no swap (what queueing alone gives). */
  control?: { requests: number; slowestMs: number; p99Ms: number; over100ms: number };
  /** Phase 4, the paced load: requests, the slowest per phase, the number over 100 ms, the pace. */
  paced: {
    paceMs: number;
    requests: number;
    slowestByPhaseMs: Record<"before" | "opening" | "after", number>;
    over100ms: number;
    p99Ms: number;
  };
  /** The server's event-loop delay from the swap to the end of the load (max, p99). */
  loopMaxMs: number;
  loopP99Ms: number;
  /** The load generator's event-loop delay over phases 3a and 3 (max). */
  clientLoopMaxMs?: number;
  /** cpuMs: the server's CPU (all threads) per cold request, one request at a time. */
  latency: Record<string, { coldP50: number; coldP99: number; hotP50: number; cpuMs: number }>;
}

const pct = (xs: number[], p: number) =>
  [...xs].sort((x, y) => x - y)[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? NaN;

/**
 * A checkout of `ref` (its api/, pipeline/, jobs/, test/ … as committed) with this tree's
 * node_modules and this server script: the baseline serves that commit's code over the same store.
 */
export function checkoutOf(ref: string): { root: string; remove(): void } {
  const root = mkdtempSync(join(tmpdir(), "bench-api-base-"));
  execFileSync("sh", ["-c", `git archive ${JSON.stringify(ref)} | tar -x -C ${JSON.stringify(root)}`], {
    cwd: ROOT,
    stdio: ["ignore", "ignore", "inherit"],
  });
  symlinkSync(join(ROOT, "node_modules"), join(root, "node_modules"));
  copyFileSync(join(ROOT, SERVER), join(root, SERVER));
  return { root, remove: () => rmSync(root, { recursive: true, force: true }) };
}

/** Serves `dataDir` from the code under `root` (`how`: load | lazy) and measures it; `timeboxMs` bounds the open. */
export async function measureApi(
  label: string,
  dataDir: string,
  how: "load" | "lazy",
  root = ROOT,
  timeboxMs = 15 * 60_000,
): Promise<ApiFigures> {
  if (!existsSync(join(root, SERVER))) throw new Error(`${root}: no ${SERVER}`);
  // tsx's loader resolved from the checkout (its node_modules), as `tsx` would run it
  // SCALE_API_NODE_ARGS: extra node flags for the server (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof")
  const extra = (process.env.SCALE_API_NODE_ARGS ?? "").split(" ").filter(Boolean);
  // the snapshot to swap to: the same folder under another path (a symlink), cold in DuckDB's caches
  const swapDir = mkdtempSync(join(tmpdir(), "bench-api-swap-"));
  const id = (JSON.parse(readFileSync(join(dataDir, "manifest.json"), "utf8")) as { snapshotId: string }).snapshotId;
  mkdirSync(join(swapDir, "snapshots"));
  symlinkSync(resolve(dataDir, "snapshots", id), join(swapDir, "snapshots", id));
  copyFileSync(join(dataDir, "manifest.json"), join(swapDir, "manifest.json"));
  const child = fork(join(root, SERVER), [dataDir, how, swapDir], {
    cwd: root,
    execArgv: ["--import", "tsx", ...extra],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const inbox: Record<string, unknown>[] = [];
  const waiters: (() => void)[] = [];
  child.on("message", (m: Record<string, unknown>) => {
    inbox.push(m);
    for (const w of waiters.splice(0)) w();
  });
  const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
  async function next<T>(key: string, ms = timeboxMs): Promise<T | null> {
    const end = Date.now() + ms;
    for (;;) {
      const i = inbox.findIndex((m) => key in m);
      if (i >= 0) return inbox.splice(i, 1)[0] as T;
      const left = end - Date.now();
      if (left <= 0) return null;
      let timer: NodeJS.Timeout | undefined;
      const code = await Promise.race([
        new Promise<"msg">((r) => waiters.push(() => r("msg"))),
        new Promise<"time">((r) => (timer = setTimeout(() => r("time"), left))),
        exited.then(() => "exit" as const),
      ]);
      clearTimeout(timer);
      if (code === "exit" && !inbox.some((m) => key in m))
        throw new Error(`${label}: the server exited before "${key}"`);
    }
  }
  try {
    const ready = await next<{ port: number; openMs: number; cpuMs: number; tickers: string[] }>("ready");
    if (!ready) {
      child.kill("SIGKILL");
      return { label, timedOut: timeboxMs } as ApiFigures;
    }
    const base = `http://127.0.0.1:${ready.port}/data/v1/`;
    const tickers = ready.tickers;
    const pick = (i: number) => tickers[(i * 7919) % tickers.length];
    const paths = [
      (i: number) => `stock_performance/${pick(i)}?type=cumulative_return`,
      (i: number) => `stock_metrics/${pick(i)}`,
      (i: number) => `stock_financials/${pick(i)}?type=quarterly`,
      (i: number) =>
        `stock_ratings?order_by=-` +
        `${["return_rating", "valuation_rating", "market_cap", "name"][i % 4]}&limit=50&offset=${i % 400}`,
      (i: number) => `stock_ratings/${pick(i)}`,
    ];
    // Node's fetch asks for gzip (Accept-Encoding: gzip, deflate), as browsers do: bodies of 1 KiB
    // and more are compressed by the server once each.
    async function get(path: string): Promise<number> {
      const s = performance.now();
      const r = await fetch(`${base}${path}${path.includes("?") ? "&" : "?"}api_key=${KEYS.alice}`);
      await r.arrayBuffer();
      if (r.status !== 200) throw new Error(`${path}: ${r.status}`);
      return performance.now() - s;
    }

    const latency: ApiFigures["latency"] = {};
    for (const [k, f] of paths.entries()) {
      const cold: number[] = [];
      child.send({ cmd: "cpu" });
      const c0 = (await next<{ cpuMs: number }>("cpu"))!.cpuMs;
      for (let i = 0; i < 100; i++) cold.push(await get(f(i + 10_000 * k)));
      child.send({ cmd: "cpu" });
      const cpuMs = ((await next<{ cpuMs: number }>("cpu"))!.cpuMs - c0) / 100;
      const hot: number[] = [];
      for (let i = 0; i < 100; i++) hot.push(await get(f(10_000 * k)));
      const [name, sub] = f(0).split("?")[0].split("/");
      latency[sub ? `${name}/:ticker` : name] = {
        coldP50: +pct(cold, 0.5).toFixed(1),
        coldP99: +pct(cold, 0.99).toFixed(1),
        hotP50: +pct(hot, 0.5).toFixed(1),
        cpuMs: +cpuMs.toFixed(1),
      };
    }

    // 3a. the control: the same saturating load for as long as phase 3 lasts (at most 100 rounds),
    // with no swap, so that what the swap adds is told from queueing. 2,100 + i: tickers and list
    // pages (offsets 100–199) no other phase asks for
    const control: number[] = [];
    // The load generator's own event loop: a stall of this process (GC of the bodies it reads)
    // delays the timing of every request in flight, as a stall of the server would.
    const clientLoop = monitorEventLoopDelay({ resolution: 5 });
    clientLoop.enable();
    {
      const end = performance.now() + 4300;
      for (let i = 0; performance.now() < end && i < 100; i++) {
        control.push(...(await Promise.all(paths.map((f) => get(f(2_100 + i))))));
        await new Promise((r) => setTimeout(r, 5));
      }
    }
    const during: { ms: number; phase: "before" | "opening" | "after"; path: string; at: number }[] = [];
    let phase: "before" | "opening" | "after" = "before";
    let movedAt = Infinity;
    let stop = false;
    const load = (async () => {
      for (let i = 0; !stop; i++) {
        const p = phase;
        // 1,000 + i: tickers (and list pages) none of the rounds above asked for (pick is a
        // bijection modulo the number of companies), so no cache of either snapshot holds them
        const at = performance.now();
        during.push(
          ...(await Promise.all(paths.map((f) => get(f(1_000 + i))))).map((ms, k) => ({
            ms,
            phase: p,
            path: paths[k](1_000 + i).split("?")[0],
            at,
          })),
        );
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    await new Promise((r) => setTimeout(r, 1000));
    phase = "opening";
    child.send({ cmd: "swap" });
    const swapped = await next<{ swapMs: number }>("swapped");
    phase = "after";
    movedAt = performance.now();
    await new Promise((r) => setTimeout(r, 3000)); // the new snapshot's cold reads, still under load
    stop = true;
    await load;
    clientLoop.disable();
    // 4. the paced load around a second swap
    const paceMs = Number(process.env.SCALE_API_PACE_MS ?? 50);
    const paced: { ms: number; phase: "before" | "opening" | "after" }[] = [];
    const sent: Promise<void>[] = [];
    let pacedPhase: "before" | "opening" | "after" = "before";
    let pacedStop = false;
    const pacer = (async () => {
      const start = performance.now();
      for (let i = 0; !pacedStop; i++) {
        const p = pacedPhase;
        // 3,000 + …: tickers none of the phases above asked for
        sent.push(
          get(paths[i % paths.length](3_000 + Math.floor(i / paths.length))).then(
            (ms) => void paced.push({ ms, phase: p }),
          ),
        );
        const wait = start + (i + 1) * paceMs - performance.now(); // on time: no drift from slow requests
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      }
    })();
    await new Promise((r) => setTimeout(r, 1000));
    pacedPhase = "opening";
    child.send({ cmd: "swap" });
    await next<{ swapMs: number }>("swapped");
    pacedPhase = "after";
    await new Promise((r) => setTimeout(r, 3000));
    pacedStop = true;
    await pacer;
    await Promise.all(sent);
    const pacedMs = paced.map((d) => d.ms);
    child.send({ cmd: "stats" });
    const stats = (await next<{ rssMB: number; peakMB: number; cpuMs: number; loopMaxMs?: number; loopP99Ms?: number }>(
      "stats",
    ))!;
    const ms = during.map((d) => d.ms);
    const slowestByPhaseMs = Object.fromEntries(
      (["before", "opening", "after"] as const).map((p) => [
        p,
        Math.round(Math.max(0, ...during.filter((d) => d.phase === p).map((d) => d.ms))),
      ]),
    ) as ApiFigures["slowestByPhaseMs"];
    return {
      label,
      openMs: ready.openMs,
      openCpuMs: ready.cpuMs,
      swapMs: swapped!.swapMs,
      rssMB: stats.rssMB,
      peakMB: stats.peakMB,
      cpuMs: stats.cpuMs,
      requestsAroundSwap: during.length,
      slowestAroundSwapMs: Math.round(Math.max(...ms)),
      p99AroundSwapMs: Math.round(pct(ms, 0.99)),
      slowestByPhaseMs,
      slowestRequests: [...during]
        .sort((a, b) => b.ms - a.ms)
        .slice(0, 3)
        .map(
          (d) =>
            `${d.path} ${Math.round(d.ms)} ms, ` +
            `sent ${d.at >= movedAt ? `${Math.round(d.at - movedAt)} ms after the move` : d.phase}`,
        ),
      over100ms: ms.filter((x) => x > 100).length,
      control: {
        requests: control.length,
        slowestMs: Math.round(Math.max(...control)),
        p99Ms: Math.round(pct(control, 0.99)),
        over100ms: control.filter((x) => x > 100).length,
      },
      paced: {
        paceMs,
        requests: paced.length,
        slowestByPhaseMs: Object.fromEntries(
          (["before", "opening", "after"] as const).map((p) => [
            p,
            Math.round(Math.max(0, ...paced.filter((d) => d.phase === p).map((d) => d.ms))),
          ]),
        ) as ApiFigures["slowestByPhaseMs"],
        over100ms: pacedMs.filter((x) => x > 100).length,
        p99Ms: Math.round(pct(pacedMs, 0.99)),
      },
      loopMaxMs: stats.loopMaxMs ?? NaN,
      loopP99Ms: stats.loopP99Ms ?? NaN,
      clientLoopMaxMs: Math.round(clientLoop.max / 1e6),
      latency,
    };
  } finally {
    if (child.exitCode === null) child.send({ cmd: "exit" }, () => undefined);
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000).unref())]);
    if (child.exitCode === null) child.kill("SIGKILL");
    unlinkSync(join(swapDir, "snapshots", id)); // the link only, never what it points to
    rmSync(swapDir, { recursive: true, force: true });
  }
}
