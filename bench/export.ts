// `npm run bench -- export`: bulk exports (issue 33, item 2) against a server in its own process
// (bench/export-server.ts), this process reading the bodies over HTTP (bytes counted, not parsed).
//   EXPORT_STORE=DIR   a published store (e.g. the 5,000 × 25 one of `bench scale`), only read: the
//                      server serves a copy of its snapshot made of hard links (symbolic links across
//                      file systems) in a temp folder, where the export cache writes its files;
//                      absent: a 300 × 8 universe is generated and published into a temp folder
// Each whole-table export is timed cold (the first: streamed from DuckDB while its cache file is
// written) and warm (later ones: sent from the cache file). Each export also reports the server's
// CPU time for it (every thread of its process), a figure the load of a shared machine disturbs
// less than the wall time. Figures, each beside its baseline from the same run:
//   1. every stock's full-period metrics (export/stock_metrics, Arrow and Parquet, cold once, warm 3
//      times) — baseline: the JSON route /stock_metrics/:ticker, one ticker after another, timed over
//      40 tickers and scaled to all of them;
//   2. every daily return (export/stock_returns, Arrow and Parquet, cold then warm): MB/s of body, the server's
//      peak RSS growth over its RSS before — baseline: DuckDB in this process scanning the same
//      Parquet (count and sum of ret), the floor of any read of them;
//   3. a small read during (2): /stock_ratings/:ticker of a ticker not asked for before, one every
//      100 ms while the export streams — baseline: the same reads with nothing else running;
//   4. the warm-up a swap runs (the Arrow files of stock_metrics and stock_returns built in the
//      background), with the small reads of (3) meanwhile: its time, CPU and their latency.
import { fork } from "node:child_process";
import { copyFileSync, linkSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import http from "node:http";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { generateSample } from "../data/generate.ts";
import { runPipeline } from "../jobs/local/runner.ts";
import { Catalog } from "../pipeline/store/catalog/catalog.ts";
import { openDuck, rows } from "../pipeline/store/duck/duck.ts";
import { readManifest, snapshotDir } from "../pipeline/store/snapshot/snapshots.ts";
import { KEYS } from "../test/api/fixture.ts";
import { serverNodeFlags } from "./script.ts";

const SERVER = resolve(import.meta.dirname, "export-server.ts");
const silent = { info: () => undefined, warn: () => undefined };

/** `from`'s files under `to`, each a hard link (a symbolic link when on another file system). */
function linkTree(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const e of readdirSync(from, { withFileTypes: true })) {
    const [a, b] = [join(from, e.name), join(to, e.name)];
    if (e.isDirectory()) linkTree(a, b);
    else
      try {
        linkSync(a, b);
      } catch {
        symlinkSync(a, b);
      }
  }
}

/** A store serving `given`'s published snapshot from links, its cache folder its own: `given` is never written. */
function mirrorStore(given: string): string {
  const id = readManifest(given)!.snapshotId;
  const out = mkdtempSync(join(tmpdir(), "bench-export-mirror-"));
  copyFileSync(join(given, "manifest.json"), join(out, "manifest.json"));
  linkTree(snapshotDir(given, id), snapshotDir(out, id));
  return out;
}

/** The store to serve, and whether it is a mirror of EXPORT_STORE (removed at the end: links and cache files). */
async function storeDir(): Promise<{ dataDir: string; mirror: boolean }> {
  const given = process.env.EXPORT_STORE;
  if (given) {
    const out = mirrorStore(given);
    console.log(`store ${given}, served from links in ${out} (the export cache writes there)`);
    return { dataDir: out, mirror: true };
  }
  const src = mkdtempSync(join(tmpdir(), "bench-export-src-"));
  await generateSample(src, { companies: 300, years: 8 });
  const dataDir = mkdtempSync(join(tmpdir(), "bench-export-"));
  const catalog = await Catalog.open(join(dataDir, "catalog.duckdb"));
  await runPipeline({ dataDir, sourceDir: src, catalog, log: silent });
  console.log(`EXPORT_STORE unset: published a generated 300 × 8 universe in ${dataDir}`);
  return { dataDir, mirror: false };
}

type Msg = Record<string, unknown>;

function startServer(dataDir: string) {
  const child = fork(SERVER, [dataDir], {
    execArgv: ["--import", "tsx", ...serverNodeFlags()],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const waiting: ((m: Msg) => void)[] = [];
  child.on("message", (m: Msg) => waiting.shift()?.(m));
  const next = () => new Promise<Msg>((r) => waiting.push(r));
  const ask = (cmd: string) => {
    const p = next();
    child.send({ cmd });
    return p;
  };
  return { child, next, ask };
}

/** GET, the body counted and dropped: status, bytes, ms to the last byte. */
function download(port: number, path: string): Promise<{ status: number; bytes: number; ms: number }> {
  const t = performance.now();
  const sep = path.includes("?") ? "&" : "?";
  return new Promise((resolveGet, reject) => {
    http
      .get({ host: "127.0.0.1", port, path: `/data/v1/${path}${sep}api_key=${KEYS.alice}` }, (res) => {
        let bytes = 0;
        res.on("data", (c: Buffer) => {
          bytes += c.length;
        });
        res.on("end", () => resolveGet({ status: res.statusCode ?? 0, bytes, ms: performance.now() - t }));
        res.on("error", reject);
      })
      .on("error", reject);
  });
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (ms: number) => `${ms.toFixed(0)} ms`;
const mb = (bytes: number) => bytes / 1e6;

/** Small reads of fresh tickers every 100 ms until `until` settles: their latencies. */
async function smallReads(port: number, tickers: string[], until: Promise<unknown>): Promise<number[]> {
  let done = false;
  until.finally(() => {
    done = true;
  });
  const out: number[] = [];
  for (const t of tickers) {
    if (done) break;
    const r = await download(port, `stock_ratings/${encodeURIComponent(t)}`);
    if (r.status !== 200) throw new Error(`small read ${t}: ${r.status}`);
    out.push(r.ms);
    await new Promise((r2) => setTimeout(r2, 100));
  }
  return out;
}

async function streamFigure(
  srv: ReturnType<typeof startServer>,
  port: number,
  path: string,
  tickers: string[],
): Promise<{ ms: number; bytes: number; growthMB: number; small: number[]; loopMaxMs: number; cpuMs: number }> {
  const mark = (await srv.ask("mark")) as { rssMB: number };
  const body = download(port, path);
  const small = await smallReads(port, tickers, body);
  const got = await body;
  if (got.status !== 200) throw new Error(`${path}: ${got.status}`);
  const peak = (await srv.ask("peak")) as { peakMB: number; loopMaxMs: number; cpuMs: number };
  return { ...got, growthMB: peak.peakMB - mark.rssMB, small, loopMaxMs: peak.loopMaxMs, cpuMs: peak.cpuMs };
}

/** One export downloaded alone: wall time, bytes and the server's CPU time for it. */
async function timedExport(srv: ReturnType<typeof startServer>, port: number, path: string) {
  await srv.ask("mark");
  const r = await download(port, path);
  if (r.status !== 200) throw new Error(`${path}: ${r.status}`);
  const { cpuMs } = (await srv.ask("peak")) as { cpuMs: number };
  return { ...r, cpuMs };
}

/** A warm export sends what the cold one did: the same number of bytes (the tests compare them byte by byte). */
function sameBytes<T extends { bytes: number }>(cold: { bytes: number }, warm: T): T {
  if (warm.bytes !== cold.bytes) throw new Error(`warm export: ${warm.bytes} bytes, cold: ${cold.bytes}`);
  return warm;
}

function returnsFigure(r: Awaited<ReturnType<typeof streamFigure>>, n: number): string {
  return (
    `${fmt(r.ms)}, ${mb(r.bytes).toFixed(0)} MB, ${(mb(r.bytes) / (r.ms / 1000)).toFixed(0)} MB/s ` +
    `(target >= 100 MB/s), ${(n / (r.ms / 1000) / 1e6).toFixed(1)} M rows/s; server RSS growth ${r.growthMB} MB ` +
    `(target < 200 MB); server CPU ${(r.cpuMs / 1000).toFixed(1)} s ` +
    `(${(mb(r.bytes) / (r.cpuMs / 1000)).toFixed(0)} MB per CPU-second); ` +
    `event loop max delay ${r.loopMaxMs.toFixed(0)} ms | small reads meanwhile: ` +
    `${r.small.length}, median ${r.small.length ? median(r.small).toFixed(1) : "-"} ms, max ` +
    `${r.small.length ? Math.max(...r.small).toFixed(1) : "-"} ms (target < 50 ms)`
  );
}

export async function benchExport(): Promise<void> {
  console.log("\n== export (issue 33 item 2): bulk Arrow / Parquet exports; wall figures on a shared box");
  console.log(
    `load average at the start: ${loadavg()
      .map((x) => x.toFixed(1))
      .join(", ")}`,
  );
  const { dataDir, mirror } = await storeDir();
  const srv = startServer(dataDir);
  const ready = (await srv.next()) as { port: number; tickers: string[]; rssMB: number };
  const { port, tickers } = ready;
  console.log(`store ${dataDir}: ${tickers.length} stocks; server RSS after open ${ready.rssMB} MB`);
  let fresh = 0;
  const freshTickers = (n: number) => {
    const out = tickers.slice(fresh, fresh + n);
    fresh += n;
    return out;
  };

  // 3 (baseline): small reads alone
  const alone = await smallReads(port, freshTickers(20), new Promise(() => undefined));
  console.log(
    `small read alone (stock_ratings/:ticker, fresh tickers): median ${median(alone).toFixed(1)} ms, ` +
      `max ${Math.max(...alone).toFixed(1)} ms`,
  );

  // 1: every stock's full-period metrics
  const sample = freshTickers(40);
  const t = performance.now();
  for (const s of sample) await download(port, `stock_metrics/${encodeURIComponent(s)}`);
  const perTicker = (performance.now() - t) / sample.length;
  const metrics = async (path: string) => {
    const cold = await timedExport(srv, port, path);
    const warm = [];
    for (let i = 0; i < 3; i++) warm.push(sameBytes(cold, await timedExport(srv, port, path)));
    return { cold, warm };
  };
  const arrow = await metrics("export/stock_metrics");
  const parquet = await metrics("export/stock_metrics?format=parquet");
  const mid = (xs: { ms: number; cpuMs: number }[]) =>
    `${fmt(median(xs.map((x) => x.ms)))} (median of 3; runs ${xs
      .map((x) => x.ms.toFixed(0))
      .join(", ")} ms; server CPU ${fmt(median(xs.map((x) => x.cpuMs)))})`;
  const both = (r: typeof arrow) => `cold ${fmt(r.cold.ms)} (server CPU ${fmt(r.cold.cpuMs)}), warm ${mid(r.warm)}`;
  console.log(
    `every stock's full-period metrics (target < 1000 ms): Arrow ${mb(arrow.cold.bytes).toFixed(1)} MB: ` +
      `${both(arrow)}; Parquet ${mb(parquet.cold.bytes).toFixed(1)} MB: ${both(parquet)} | baseline: ` +
      `JSON per ticker ${perTicker.toFixed(1)} ms × ${tickers.length} = ${fmt(perTicker * tickers.length)}`,
  );

  // 2 + 3: every daily return, cold then warm, with small reads meanwhile
  const db = await openDuck(":memory:", { threads: "2" });
  const s0 = performance.now();
  const [scan] = await rows<{ n: bigint }>(db.conn, "select count(*) as n, sum(ret) as s from read_parquet($f)", {
    f: join(snapshotDir(dataDir, readManifest(dataDir)!.snapshotId), "stock_returns", "*.parquet"),
  });
  const scanMs = performance.now() - s0;
  db.close();
  const n = Number(scan.n);
  for (const format of ["arrow", "parquet"]) {
    const path = `export/stock_returns?format=${format}`;
    const cold = await streamFigure(srv, port, path, freshTickers(200));
    const warm = sameBytes(cold, await streamFigure(srv, port, path, freshTickers(200)));
    for (const [which, r] of [
      ["cold", cold],
      ["warm", warm],
    ] as const)
      console.log(
        `every daily return (${n.toLocaleString("en-US")} rows) as ${format}, ${which}: ${returnsFigure(r, n)} | ` +
          `baseline: DuckDB scan of the same Parquet in-process ${fmt(scanMs)} ` +
          `(${(n / (scanMs / 1000) / 1e6).toFixed(1)} M rows/s)`,
      );
  }
  // 4: the warm-up after a swap, small reads meanwhile
  await srv.ask("mark");
  const warmed = srv.ask("warm") as Promise<{ tables: string[]; ms: number }>;
  const during = await smallReads(port, freshTickers(200), warmed);
  const w = await warmed;
  const { cpuMs, loopMaxMs } = (await srv.ask("peak")) as { cpuMs: number; loopMaxMs: number };
  const some = during.length > 0;
  console.log(
    `warm-up after a swap (${w.tables.join(", ")} as Arrow files): ${fmt(w.ms)}, server CPU ${fmt(cpuMs)}, ` +
      `event loop max delay ${loopMaxMs.toFixed(0)} ms | small reads meanwhile: ${during.length}, median ` +
      `${some ? median(during).toFixed(1) : "-"} ms, max ${some ? Math.max(...during).toFixed(1) : "-"} ms ` +
      "(target < 50 ms)",
  );
  srv.child.kill();
  if (mirror) rmSync(dataDir, { recursive: true, force: true });
  console.log(
    `load average at the end: ${loadavg()
      .map((x) => x.toFixed(1))
      .join(", ")}`,
  );
}
