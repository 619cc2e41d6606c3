// Server process of `npm run bench -- scale-api` (bench/api-load.ts is the other side): the REST
// API over the published snapshot of a store, served the old way (`load`: the whole Snapshot in
// memory) or the way the server does (`lazy`: the reader). Forked with an IPC channel; the load
// generator runs in the parent process, so the server's event loop carries only the server's work
// (in one process, the client's fetch, parsing and decompression shared the loop it measured).
//   → {ready, port, openMs, tickers, cpuMs}   once it serves
// ← {cmd: "swap"}   opens the next snapshot (the same one under another path, see below; a second swap
//                   goes back to the first path), moves the one reference, retires the old
//   → {swapped, swapMs}
//   ← {cmd: "stats"}  → {stats, rssMB, peakMB, cpuMs, loopMaxMs, loopP99Ms}
//   ← {cmd: "cpu"}    → {cpu, cpuMs}   (the load generator takes differences: CPU per request)
// loopMaxMs / loopP99Ms: the event loop's delay (perf_hooks) from the swap command to the stats
// one, i.e. what a request arriving at a bad moment waited before any of its own work.
// The imports are relative, so this file copied into another checkout (bench/api-load.ts does that
// for the baseline) serves that checkout's code.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { Writable } from "node:stream";
import { createApp } from "../api/app.ts";
import { ReaderSource } from "../api/resources/reader-source.ts";
import type { SnapshotRef } from "../api/resources/snapshot-access.ts";
import { createAccessLogger, createLogger } from "../jobs/logger.ts";
import { loadSnapshot } from "../pipeline/store/read/load-snapshot.ts";
import { SnapshotReader } from "../pipeline/store/read/snapshot-reader.ts";
import { readManifest } from "../pipeline/store/snapshot/snapshots.ts";
import { buildCatalog, buildFixture } from "../test/api/fixture.ts";

// swapDir: a store whose snapshot folder is a symlink to this one's. DuckDB keys its file and
// footer caches by path, so the next reader starts cold, as after a real publish (same bytes, no
// second copy of a GB store); opened again under the same path it could reuse the old one's.
const [dataDir, how, swapDir = dataDir] = process.argv.slice(2) as [string, "load" | "lazy", string?];
const send = (m: object) => process.send!(m);
const rssMB = () => Math.round(process.memoryUsage().rss / 1e6);
const cpuMs = () => {
  const u = process.cpuUsage();
  return Math.round((u.user + u.system) / 1000);
};

const id = readManifest(dataDir)!.snapshotId;
const open = async (dir = dataDir): Promise<SnapshotRef> =>
  how === "load" ? loadSnapshot(dir, id) : new ReaderSource(await SnapshotReader.open(dir, id));

const t = performance.now();
let current = await open();
const openMs = Math.round(performance.now() - t);
const fx = buildFixture({ stocks: 20, days: 300, seed: 1, id: "keys" }); // only for the catalog's API keys (KEYS)
const sink = new Writable({ write: (_c, _e, cb) => cb() });
const app = createApp({
  snapshot: () => current,
  catalog: buildCatalog(fx),
  logger: createLogger("info", sink),
  accessLogger: createAccessLogger("info", sink),
  rateLimit: { points: 1e9, durationSec: 60 },
});
const server = http.createServer(app);
await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
const companies =
  how === "load"
    ? (current as Awaited<ReturnType<typeof loadSnapshot>>).companies
    : (current as ReaderSource).reader.companies;

let swaps = 0;
const loop = monitorEventLoopDelay({ resolution: 5 });
loop.enable();

process.on("message", async (m: { cmd: string }) => {
  if (m.cmd === "cpu") send({ cpu: true, cpuMs: cpuMs() });
  else if (m.cmd === "swap") {
    loop.reset();
    const s = performance.now();
    // the first swap opens the store under the other path, the second the original again (its old reader is closed by
    // then: cold again)
    const next = await open(swaps++ % 2 === 0 ? swapDir : dataDir);
    const old = current;
    current = next; // the swap: one reference
    send({ swapped: true, swapMs: Math.round(performance.now() - s) });
    if (old instanceof ReaderSource) old.reader.retire(1000);
  } else if (m.cmd === "stats")
    send({
      stats: true,
      rssMB: rssMB(),
      peakMB: Math.round(process.resourceUsage().maxRSS / 1e3),
      cpuMs: cpuMs(),
      loopMaxMs: Math.round(loop.max / 1e6),
      loopP99Ms: Math.round(loop.percentile(99) / 1e6),
    });
  else if (m.cmd === "exit") {
    server.close();
    process.exit(0);
  }
});
send({
  ready: true,
  port: (server.address() as AddressInfo).port,
  openMs,
  cpuMs: cpuMs(),
  tickers: companies.map((c) => c.ticker),
});
