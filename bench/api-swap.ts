// Child process of the scale benchmark (`tsx bench/api-swap.ts <dataDir> <load|lazy>`): the REST
// API over the published snapshot of a store, served the old way (the whole Snapshot in memory)
// or the new way (the lazy reader). Times cold and hot requests, then a swap under load: requests
// keep arriving every 5 ms (each for a ticker or page nothing asked for before, so no cached body
// or reader cache answers it, before the swap or after) while the
// next snapshot opens, the reference moves and the new reader's caches are still cold. Prints one
// JSON line: open/swap time, slowest request around the swap, RSS.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { createApp } from "../api/app.ts";
import { ReaderSource } from "../api/resources/reader-source.ts";
import type { SnapshotRef } from "../api/resources/snapshot-access.ts";
import { createAccessLogger, createLogger } from "../jobs/logger.ts";
import { loadSnapshot } from "../pipeline/store/load-snapshot.ts";
import { SnapshotReader } from "../pipeline/store/snapshot-reader.ts";
import { readManifest } from "../pipeline/store/snapshots.ts";
import { buildCatalog, buildFixture, KEYS } from "../test/api/fixture.ts";

const [dataDir, how] = process.argv.slice(2) as [string, "load" | "lazy"];
const id = readManifest(dataDir)!.snapshotId;
const open = async (): Promise<SnapshotRef> => (how === "load" ? loadSnapshot(dataDir, id) : new ReaderSource(await SnapshotReader.open(dataDir, id)));
const rssMB = () => Math.round(process.memoryUsage().rss / 1e6);
const pct = (xs: number[], p: number) => [...xs].sort((x, y) => x - y)[Math.min(xs.length - 1, Math.floor(p * xs.length))] ?? NaN;

let t = performance.now();
let current = await open();
const openMs = Math.round(performance.now() - t);
const fx = buildFixture({ stocks: 20, days: 300, seed: 1, id: "keys" }); // only for the catalog's API keys
const sink = new Writable({ write: (_c, _e, cb) => cb() });
const app = createApp({ snapshot: () => current, catalog: buildCatalog(fx), logger: createLogger("info", sink), accessLogger: createAccessLogger("info", sink), rateLimit: { points: 1e9, durationSec: 60 } });
const server = http.createServer(app);
await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/data/v1/`;

const companies = how === "load" ? (current as Awaited<ReturnType<typeof loadSnapshot>>).companies : (current as ReaderSource).reader.companies;
const pick = (i: number) => companies[(i * 7919) % companies.length].ticker;
const paths = [
  (i: number) => `stock_performance/${pick(i)}?type=cumulative_return`,
  (i: number) => `stock_metrics/${pick(i)}`,
  (i: number) => `stock_financials/${pick(i)}?type=quarterly`,
  (i: number) => `stock_ratings?order_by=-${["return_rating", "valuation_rating", "market_cap", "name"][i % 4]}&limit=50&offset=${i % 400}`,
  (i: number) => `stock_ratings/${pick(i)}`,
];
async function get(path: string): Promise<number> {
  const s = performance.now();
  const r = await fetch(`${base}${path}${path.includes("?") ? "&" : "?"}api_key=${KEYS.alice}`);
  await r.arrayBuffer();
  if (r.status !== 200) throw new Error(`${path}: ${r.status}`);
  return performance.now() - s;
}

const latency: Record<string, { coldP50: number; coldP99: number; hotP50: number }> = {};
for (const [k, f] of paths.entries()) {
  const cold: number[] = [];
  for (let i = 0; i < 100; i++) cold.push(await get(f(i + 10_000 * k)));
  const hot: number[] = [];
  for (let i = 0; i < 100; i++) hot.push(await get(f(10_000 * k))); // the same body again: the body cache answers
  const [name, sub] = f(0).split("?")[0].split("/");
  latency[sub ? `${name}/:ticker` : name] = { coldP50: +pct(cold, 0.5).toFixed(1), coldP99: +pct(cold, 0.99).toFixed(1), hotP50: +pct(hot, 0.5).toFixed(1) };
}
const rssAfterReads = rssMB();

// Each request around the swap with the phase it started in: before the next snapshot opens,
// while it opens (the old one serves), after the reference moved (the new one serves, cold).
const during: { ms: number; phase: "before" | "opening" | "after" }[] = [];
let phase: "before" | "opening" | "after" = "before";
let stop = false;
const load = (async () => {
  for (let i = 0; !stop; i++) {
    const p = phase;
    // 1,000 + i: tickers (and list pages) none of the cold and hot rounds above asked for (pick is
    // a bijection modulo the number of companies), so no cache of either reader holds them
    during.push(...(await Promise.all(paths.map((f) => get(f(1_000 + i))))).map((ms) => ({ ms, phase: p })));
    await new Promise((r) => setTimeout(r, 5));
  }
})();
await new Promise((r) => setTimeout(r, 1000));
t = performance.now();
phase = "opening";
const next = await open();
const old = current;
current = next; // the swap: one reference
phase = "after";
const swapMs = Math.round(performance.now() - t);
if (old instanceof ReaderSource) old.reader.retire(1000);
await new Promise((r) => setTimeout(r, 3000)); // the new snapshot's cold reads, still under load
stop = true;
await load;
const ms = during.map((d) => d.ms);
const slowest = Object.fromEntries((["before", "opening", "after"] as const).map((p) => [p, Math.round(Math.max(0, ...during.filter((d) => d.phase === p).map((d) => d.ms)))]));
console.log(JSON.stringify({ how, openMs, swapMs, rssAfterReadsMB: rssAfterReads, rssMB: rssMB(), requestsAroundSwap: during.length, slowestRequestAroundSwapMs: Math.round(Math.max(...ms)), slowestByPhaseMs: slowest, p99AroundSwapMs: Math.round(pct(ms, 0.99)), latency, peakMB: Math.round(process.resourceUsage().maxRSS / 1e3) }));
server.close();
process.exit(0);
