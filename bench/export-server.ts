// Server process of `npm run bench -- export` (bench/export.ts is the other side): the REST API
// over a store's published snapshot, read by the lazy reader as the server does. Forked with an
// IPC channel so the load generator's reading of the bodies does not share this event loop; with
// `npm start`'s node flags (bench/script.ts serverNodeFlags).
//   → {ready, port, tickers, rssMB}   once it serves
//   ← {cmd: "mark"}    → {marked, rssMB}       starts a peak-RSS window (sampled every 10 ms)
//   ← {cmd: "peak"}    → {peak, rssMB, peakMB, loopMaxMs, cpuMs}   the window's peak RSS, event-loop
//                        delay and CPU time of this process (user + system, every thread: DuckDB's too)
//   ← {cmd: "warm"}    → {warmed, tables, ms}  the served snapshot's cached exports dropped, then the
//                        warm-up a swap runs (api/rest/export.ts warmExports), timed
import http from "node:http";
import type { AddressInfo } from "node:net";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { Writable } from "node:stream";
import { createApp } from "../api/app.ts";
import { ReaderSource } from "../api/resources/reader-source.ts";
import { warmExports } from "../api/rest/export.ts";
import { createAccessLogger, createLogger } from "../jobs/logger.ts";
import { dropExportCaches } from "../pipeline/store/read/export-cache.ts";
import { SnapshotReader } from "../pipeline/store/read/snapshot-reader.ts";
import { readManifest } from "../pipeline/store/snapshot/snapshots.ts";
import { buildCatalog, buildFixture } from "../test/api/fixture.ts";

const [dataDir] = process.argv.slice(2) as [string];
const send = (m: object) => process.send!(m);
const rssMB = () => Math.round(process.memoryUsage().rss / 1e6);

const id = readManifest(dataDir)!.snapshotId;
const current = new ReaderSource(await SnapshotReader.open(dataDir, id));
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

let peak = rssMB();
let cpu = process.cpuUsage();
setInterval(() => {
  peak = Math.max(peak, rssMB());
}, 10).unref();
const loop = monitorEventLoopDelay({ resolution: 5 });
loop.enable();

process.on("message", (m: { cmd: string }) => {
  if (m.cmd === "mark") {
    peak = rssMB();
    cpu = process.cpuUsage();
    loop.reset();
    send({ marked: true, rssMB: peak });
  } else if (m.cmd === "warm") {
    const t = performance.now();
    void dropExportCaches(dataDir, "none")
      .then(() => warmExports(current))
      .then((tables) => send({ warmed: true, tables, ms: performance.now() - t }));
  } else if (m.cmd === "peak") {
    const used = process.cpuUsage(cpu);
    const cpuMs = (used.user + used.system) / 1000;
    send({ peak: true, rssMB: rssMB(), peakMB: Math.max(peak, rssMB()), loopMaxMs: loop.max / 1e6, cpuMs });
  }
});
send({
  ready: true,
  port: (server.address() as AddressInfo).port,
  tickers: current.reader.companies.map((c) => c.ticker),
  rssMB: rssMB(),
});
