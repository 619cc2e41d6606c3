// `npm start` over a published big store, started as `npm start` starts it (`node <its flags>
// dist/jobs/host/start.js`, no Redis, one server process): time to /healthz 200 and to the banner, the
// process's RSS sampled
// every 100 ms (peak before the banner, and peak while requests are served and the start-up
// rebalances run), and the latency of the first requests from /healthz 200 on, a first
// stock_metrics request first. Part of `npm run bench -- scale-api`.
//
// Each run gets its own copy of the store (snapshot files hard-linked, so nothing is copied and
// the store stays as it was) whose catalog holds user portfolios without a backtest: the two this
// bench adds, and the demo user's, created by that start. The start-up path has that work to find.
import { execFileSync, spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join, resolve } from "node:path";
import { openDuck } from "../pipeline/store/duck/duck.ts";
import { serverNodeFlags } from "./script.ts";

const DEMO_KEY = "bench-scale-start-demo-key";
/** The start-up path's work: user portfolios the published snapshot has no backtest of. */
const USER_PORTFOLIOS = 2;

export interface StartFigures {
  label: string;
  healthyMs: number | null;
  bannerMs: number | null;
  /** Peak RSS up to the banner (or the end of the time box when none came). */
  peakBeforeBannerMB: number;
  /** Peak RSS from /healthz 200 to the end of the run: the requests below and the start-up rebalances. */
  peakServingMB: number;
  /** Peak RSS of the server's child processes (one start-up rebalance each), summed at each sample. */
  peakChildrenMB: number;
  /** The first requests, in order, from /healthz 200 on: [path, ms, status]. */
  first: [string, number, number][];
  /** Light requests (one a second) while the start-up rebalances ran: count, slowest. */
  during: { requests: number; slowestMs: number };
  /** Start-up rebalances published within the run, and when the last one was (ms from spawn). */
  rebalances: number;
  rebalancesDoneMs: number | null;
  /** Why the run ended: done, time box, RSS cap. */
  end: string;
}

const freePort = () =>
  new Promise<number>((res, rej) => {
    const s = createServer();
    s.once("error", rej);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });

const rssMB = (pid: number): number => {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Math.round(Number(m[1]) / 1024) : 0;
  } catch {
    return 0;
  }
};

/** Child processes of `pid` (forked from its main thread, as Node forks), and theirs. */
const descendants = (pid: number): number[] => {
  try {
    const kids = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").split(" ").filter(Boolean).map(Number);
    return kids.flatMap((k) => [k, ...descendants(k)]);
  } catch {
    return [];
  }
};

/** A store of its own for one run: the published snapshot hard-linked, the catalog copied, user portfolios added. */
async function storeCopy(store: string): Promise<{ dir: string; tickers: string[] }> {
  // beside the store: hard links need the same file system
  const dir = mkdtempSync(join(dirname(resolve(store)), "bench-start-"));
  const manifest = JSON.parse(readFileSync(join(store, "manifest.json"), "utf8")) as { snapshotId: string };
  mkdirSync(join(dir, "snapshots"));
  execFileSync("cp", ["-al", join(store, "snapshots", manifest.snapshotId), join(dir, "snapshots")]);
  copyFileSync(join(store, "manifest.json"), join(dir, "manifest.json"));
  if (existsSync(join(store, "catalog.duckdb")))
    copyFileSync(join(store, "catalog.duckdb"), join(dir, "catalog.duckdb"));
  const { Catalog } = await import("../pipeline/store/catalog/catalog.ts");
  const catalog = await Catalog.open(join(dir, "catalog.duckdb"));
  const user = await catalog.createUser({ email: "bench@example.com", firstName: "B", lastName: "S", phoneNumber: "" });
  for (let i = 0; i < USER_PORTFOLIOS; i++)
    await catalog.createUserPortfolio(user.id, {
      name: `Bench ${i}`,
      description: "",
      rebalanceFrequency: 3,
      maxStocks: 20 + i,
      maxStocksCriteria: "total_rating",
      maxStocksCriteriaOrder: "descending",
      maxSectorConcentration: null,
      ranges: {},
    });
  await catalog.idle();
  const db = await openDuck();
  try {
    const r = await db.conn.runAndReadAll("select ticker from read_parquet($1) order by ticker", [
      join(dir, "snapshots", manifest.snapshotId, "companies.parquet"),
    ]);
    return { dir, tickers: (r.getRowsJS() as [string][]).map(([t]) => t) };
  } finally {
    db.close();
  }
}

const rebalancesIn = (dir: string): number =>
  ((JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8")) as { log?: { kind: string }[] }).log ?? []).filter(
    (e) => e.kind === "rebalance",
  ).length;

/**
 * Runs `node dist/jobs/host/start.js` from `root` (built there) over a copy of `store`. Ends when the
 * banner is out and the start-up rebalances are published, or at `timeboxMs`, or when the
 * process's RSS passes `rssCapMB` (the whole-snapshot loader grows past 6 GB at 5,000 × 25).
 */
export async function measureStart(
  label: string,
  store: string,
  root: string,
  timeboxMs: number,
  rssCapMB: number,
): Promise<StartFigures> {
  const { dir, tickers } = await storeCopy(store);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const t0 = performance.now();
  const child = spawn(process.execPath, [...serverNodeFlags(), join(root, "dist/jobs/host/start.js")], {
    cwd: root,
    env: {
      ...process.env,
      DATA_DIR: dir,
      PORT: String(port),
      REDIS_URL: "",
      SOURCE_DIR: "",
      DEMO_API_KEY: DEMO_KEY,
      WEB_CONCURRENCY: "1",
      LOG_LEVEL: "warn",
      LOG_FORMAT: "json",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<number | null>((r) => child.once("exit", (c) => r(c)));
  let out = "";
  let bannerMs: number | null = null;
  child.stdout!.on("data", (b) => {
    out += b;
    // the banner's key: `REST API: …` since it comes before the snapshot is served, `serving …` before
    if (bannerMs === null && (out.includes(`REST API: ${base}/data/v1`) || out.includes(`serving ${base}/data/v1`)))
      bannerMs = performance.now() - t0;
  });
  let err = "";
  child.stderr!.on("data", (b) => (err = (err + b).slice(-4000)));

  let peakBefore = 0;
  let peakServing = 0;
  let peakChildren = 0;
  let healthyMs: number | null = null;
  let capped = false;
  const sampler = setInterval(() => {
    const mb = rssMB(child.pid!);
    if (bannerMs === null) peakBefore = Math.max(peakBefore, mb);
    if (healthyMs !== null) peakServing = Math.max(peakServing, mb);
    peakChildren = Math.max(
      peakChildren,
      descendants(child.pid!).reduce((sum, k) => sum + rssMB(k), 0),
    );
    if (mb > rssCapMB && !capped) {
      capped = true;
      child.kill("SIGKILL");
    }
  }, 100);

  const get = async (path: string): Promise<[string, number, number]> => {
    const s = performance.now();
    const r = await fetch(`${base}${path}`, { headers: { api_key: DEMO_KEY } }).catch(() => null);
    await r?.arrayBuffer().catch(() => undefined);
    return [path, Math.round(performance.now() - s), r?.status ?? 0];
  };
  const alive = () => child.exitCode === null && child.signalCode === null;
  const until = t0 + timeboxMs;
  let end = "time box";
  const first: [string, number, number][] = [];
  const during = { requests: 0, slowestMs: 0 };
  let rebalancesDoneMs: number | null = null;
  try {
    while (alive() && performance.now() < until) {
      const r = await fetch(`${base}/healthz`).catch(() => null);
      if (r?.status === 200) {
        healthyMs = performance.now() - t0;
        break;
      }
      await new Promise((res) => setTimeout(res, 100));
    }
    if (healthyMs !== null) {
      const t = (i: number) => tickers[(i * 7919) % tickers.length];
      for (const path of [
        `/data/v1/stock_metrics/${t(1)}`,
        `/data/v1/stock_ratings?limit=50`,
        `/data/v1/stock_performance/${t(2)}?type=cumulative_return`,
        `/data/v1/stock_metrics/${t(3)}`,
        `/data/v1/portfolios`,
        `/healthz`,
      ])
        if (alive()) first.push(await get(path));
      // then one request a second until the banner is out and the start-up rebalances are published
      for (let i = 10; alive() && performance.now() < until; i++) {
        const n = rebalancesIn(dir);
        if (bannerMs !== null && n >= USER_PORTFOLIOS + 1) {
          rebalancesDoneMs = performance.now() - t0;
          end = "done";
          break;
        }
        const [, ms] = await get(`/data/v1/stock_metrics/${t(i)}`);
        during.requests++;
        during.slowestMs = Math.max(during.slowestMs, ms);
        await new Promise((res) => setTimeout(res, 1000));
      }
    }
    if (capped) end = `RSS over ${rssCapMB} MB: killed`;
    else if (!alive() && end !== "done") end = `exited (${child.exitCode}): ${err.trim().split("\n").at(-1)}`;
  } finally {
    clearInterval(sampler);
    if (alive()) child.kill("SIGTERM");
    const killer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(killer);
  }
  const figures: StartFigures = {
    label,
    healthyMs: healthyMs === null ? null : Math.round(healthyMs),
    bannerMs: bannerMs === null ? null : Math.round(bannerMs),
    peakBeforeBannerMB: peakBefore,
    peakServingMB: peakServing,
    peakChildrenMB: peakChildren,
    first,
    during,
    rebalances: rebalancesIn(dir),
    rebalancesDoneMs: rebalancesDoneMs === null ? null : Math.round(rebalancesDoneMs),
    end,
  };
  rmSync(dir, { recursive: true, force: true });
  return figures;
}

const sec = (ms: number | null) => (ms === null ? "—" : `${(ms / 1000).toFixed(1)} s`);

/**
 * The baseline (`SCALE_START_BASE`, default the commit before the start-up path stopped loading the
 * whole snapshot) beside this tree, each built (`dist/`) and started as `npm start` starts.
 */
export async function benchScaleStart(store: string): Promise<void> {
  const { checkoutOf } = await import("./api-load.ts");
  const ROOT = resolve(import.meta.dirname, "..");
  const baseRef = process.env.SCALE_START_BASE ?? "b483268";
  const timebox = Number(process.env.SCALE_START_TIMEBOX ?? 180) * 1000;
  const cap = Number(process.env.SCALE_START_RSS_CAP_MB ?? 7000);
  execFileSync(process.execPath, [join(ROOT, "scripts/dist-fresh.mjs")], { stdio: "inherit" });
  const checkout = checkoutOf(baseRef);
  try {
    execFileSync(process.execPath, [join(checkout.root, "scripts/dist-fresh.mjs")], {
      cwd: checkout.root,
      stdio: ["ignore", "ignore", "inherit"],
    });
    console.log(
      [
        `npm start over ${store} (node dist/jobs/host/start.js, no Redis, WEB_CONCURRENCY=1;`,
        `${USER_PORTFOLIOS} user portfolios + the demo's without a backtest;`,
        `time box ${sec(timebox)}, RSS cap ${cap} MB):`,
      ].join(" "),
    );
    const a = await measureStart(`baseline: ${baseRef}`, store, checkout.root, timebox, cap);
    const b = await measureStart("this tree", store, ROOT, timebox, cap);
    for (const x of [a, b]) {
      const done = x.rebalancesDoneMs === null ? "" : ` by ${sec(x.rebalancesDoneMs)}`;
      console.log(
        [
          `  ${x.label}: healthy after ${sec(x.healthyMs)}, banner after ${sec(x.bannerMs)} (target < 10 s)`,
          `peak RSS before the banner ${x.peakBeforeBannerMB} MB`,
          `while serving ${x.peakServingMB} MB (target < 1024 MB), its child processes' ${x.peakChildrenMB} MB`,
          `start-up rebalances published ${x.rebalances}${done} | end: ${x.end}`,
        ].join(" | "),
      );
      const first = x.first.map(([p, ms, s]) => `${p} ${ms} ms (${s})`).join("; ");
      console.log(`    first requests: ${first || "—"}`);
      const { requests, slowestMs } = x.during;
      console.log(`    one request a second while the start-up rebalances ran: ${requests}, slowest ${slowestMs} ms`);
    }
  } finally {
    checkout.remove();
  }
}
