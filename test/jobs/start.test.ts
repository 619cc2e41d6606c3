// `npm start`'s script as a real process over a real socket: 503 before the first snapshot,
// healthy after, the demo key works, and a snapshot published by another process (the CLI) is
// swapped in while requests keep flowing, without one failed request.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateSample } from "../../data/generate.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const TSX = join(ROOT, "node_modules/.bin/tsx");
const KEY = "test-demo-key-0123456789";
let server: ChildProcess;
let base = "";
let dataDir = "";
let sourceB = "";
const env = () => ({
  ...process.env,
  PORT: "0",
  DATA_DIR: dataDir,
  DEMO_API_KEY: KEY,
  LOG_LEVEL: "warn",
  REDIS_URL: "",
  WEB_CONCURRENCY: "1",
});

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "start-data-"));
  const sourceA = (
    await generateSample(mkdtempSync(join(tmpdir(), "start-src-a-")), { seed: 7, companies: 30, years: 3 })
  ).outDir;
  sourceB = (await generateSample(mkdtempSync(join(tmpdir(), "start-src-b-")), { seed: 8, companies: 30, years: 3 }))
    .outDir;
  server = spawn(TSX, ["jobs/host/start.ts"], {
    cwd: ROOT,
    env: { ...env(), SOURCE_DIR: sourceA },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  base = await new Promise<string>((res, rej) => {
    const t = setTimeout(() => rej(new Error(`no URL printed:\n${out}`)), 120_000);
    server.stdout!.on("data", (b) => {
      out += b;
      const m = /serving (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m) {
        clearTimeout(t);
        res(m[1]);
      }
    });
    server.stderr!.on("data", (b) => (out += b));
  });
}, 180_000);

afterAll(() => {
  server?.kill("SIGTERM");
});

const get = (path: string) => fetch(`${base}${path}`);

describe("npm start", () => {
  it("is healthy with the first snapshot and serves the demo key's data", async () => {
    const h = await get("/healthz");
    expect(h.status).toBe(200);
    const r = await get(`/data/v1/stock_ratings?limit=3&api_key=${KEY}`);
    expect(r.status).toBe(200);
    expect(await r.json()).toHaveLength(3);
    const wl = await (await get(`/data/v1/watchlists?api_key=${KEY}`)).json();
    expect(wl[0].stockCount).toBe(10);
    const mine = await (await get(`/data/v1/portfolios?api_key=${KEY}`)).json();
    expect(mine).toHaveLength(1);
    const holdings = await get(`/data/v1/portfolio_holdings/${mine[0].id}?api_key=${KEY}`);
    expect(holdings.status).toBe(200);
  });

  it("swaps to a snapshot another process publishes without failing a request", async () => {
    const before = (await (await get("/healthz")).json()).snapshot;
    const cli = spawn(TSX, ["jobs/cli/pipeline.ts", "run", "--source", sourceB], {
      cwd: ROOT,
      env: env(),
      stdio: ["ignore", "pipe", "pipe"],
    });
    const cliDone = new Promise<number>((res) => cli.on("exit", (c) => res(c ?? 1)));
    const statuses = new Map<number, number>();
    let after = before;
    const until = Date.now() + 90_000;
    while (after === before && Date.now() < until) {
      const rs = await Promise.all([
        get("/healthz"),
        get(`/data/v1/stock_ratings?limit=50&api_key=${KEY}`),
        get(`/data/v1/benchmarks?api_key=${KEY}`),
      ]);
      for (const r of rs) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      after = (await rs[0].json()).snapshot;
      await Promise.all(rs.slice(1).map((r) => r.arrayBuffer()));
    }
    expect(await cliDone).toBe(0);
    expect(after).not.toBe(before);
    expect([...statuses.keys()]).toEqual([200]);
    expect(statuses.get(200)).toBeGreaterThan(10);
  });
});
