// The whole-table export cache (pipeline/store/read/export-cache.ts) behind /data/v1/export: over a
// published snapshot (a generated 150-company, 8-year source through a real pipeline run) served by
// the lazy reader. The expected values are DuckDB's own reading of the snapshot's Parquet; the
// cached bytes are compared with the streamed ones byte for byte.
import { existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tableFromIPC } from "apache-arrow";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ReaderSource } from "../../api/resources/reader-source.ts";
import { configureExports, warmExports } from "../../api/rest/export.ts";
import { loadConfig } from "../../jobs/config.ts";
import { openDuck, rows } from "../../pipeline/store/duck/duck.ts";
import { configureExportCache, dropExportCaches } from "../../pipeline/store/read/export-cache.ts";
import { SnapshotReader } from "../../pipeline/store/read/snapshot-reader.ts";
import { pruneStore, snapshotDir } from "../../pipeline/store/snapshot/snapshots.ts";
import { exportCacheDir, exportCacheFile } from "../../pipeline/store/snapshot/staging-layout.ts";
import { generatedStore } from "../store/published.ts";
import { KEYS } from "./fixture.ts";
import { startTestServer, type TestServer } from "./helpers.ts";

let srv: TestServer;
let reader: SnapshotReader;
let dataDir: string;
let id: string;
let dir: string;
let db: Awaited<ReturnType<typeof openDuck>>;
const DEFAULT_BOUND = 4096 * 1024 * 1024;

beforeAll(async () => {
  const store = await generatedStore({ companies: 150, years: 8, seed: 9, tickersPerPartition: 40 });
  dataDir = store.dataDir;
  id = await store.run();
  dir = snapshotDir(dataDir, id);
  reader = await SnapshotReader.open(dataDir, id, { cacheEntries: 8 });
  srv = await startTestServer({ deps: { snapshot: () => new ReaderSource(reader) } });
  db = await openDuck();
}, 180_000);
afterAll(async () => {
  await srv?.close();
  reader?.close();
  db?.close();
  configureExportCache({ limitBytes: DEFAULT_BOUND });
});
afterEach(async () => {
  configureExportCache({ limitBytes: DEFAULT_BOUND });
  await dropExportCaches(dataDir, "none"); // every test starts with no cached file
});

interface Got {
  status: number;
  headers: Headers;
  bytes: Buffer;
}
async function get(path: string, params: Record<string, string> = {}, init: RequestInit = {}): Promise<Got> {
  const u = new URL(`${srv.url}/data/v1/${path}`);
  for (const [k, v] of Object.entries({ api_key: KEYS.alice, ...params })) u.searchParams.set(k, v);
  const r = await fetch(u, init);
  return { status: r.status, headers: r.headers, bytes: Buffer.from(await r.arrayBuffer()) };
}
const cached = (name: string) => exportCacheFile(dataDir, id, name);
const folder = () => join(exportCacheDir(dataDir), id);
const files = () => (existsSync(folder()) ? readdirSync(folder()).sort() : []);
/** The headers a client sees, but the per-request ones. */
const stable = (h: Headers) =>
  Object.fromEntries([...h.entries()].filter(([k]) => !["date", "x-request-id", "keep-alive"].includes(k)));
/** `check` every 20 ms (bounded) until it holds. */
async function eventually(check: () => boolean): Promise<boolean> {
  for (let i = 0; i < 250 && !check(); i++) await new Promise((r) => setTimeout(r, 20));
  return check();
}

/** DuckDB's count and sum of the snapshot's daily returns: the independent reference. */
async function returnsReference() {
  const [r] = await rows<{ n: bigint; s: number }>(
    db.conn,
    "select count(*) as n, sum(ret) as s from read_parquet($f)",
    { f: join(dir, "stock_returns", "*.parquet") },
  );
  return { n: Number(r.n), s: r.s };
}

describe("export cache: a whole-table export is kept and served from its file", () => {
  it("Arrow: the file holds the streamed bytes; a later export sends them with the same headers", async () => {
    const first = await get("export/stock_returns");
    expect(first.status).toBe(200);
    expect(await eventually(() => existsSync(cached("stock_returns.arrow")))).toBe(true);
    expect(readFileSync(cached("stock_returns.arrow")).equals(first.bytes)).toBe(true);
    const second = await get("export/stock_returns");
    expect(second.status).toBe(200);
    expect(second.bytes.equals(first.bytes)).toBe(true);
    expect(stable(second.headers)).toEqual(stable(first.headers));
    // the values: every stored return, as DuckDB reads the snapshot
    const t = tableFromIPC(second.bytes);
    const ret = t.getChild("ret")!.toArray() as Float64Array;
    const ref = await returnsReference();
    expect(t.numRows).toBe(ref.n);
    expect(ret.reduce((a, b) => a + b, 0)).toBeCloseTo(ref.s, 6);
    // served from the file: what the file holds is what is sent
    writeFileSync(cached("stock_returns.arrow"), "marker");
    expect((await get("export/stock_returns")).bytes.toString()).toBe("marker");
  });

  it("HEAD and If-None-Match answer as without a cached file", async () => {
    const first = await get("export/stock_metrics");
    const headBefore = await fetch(`${srv.url}/data/v1/export/stock_metrics?api_key=${KEYS.alice}`, { method: "HEAD" });
    expect(await eventually(() => existsSync(cached("stock_metrics.arrow")))).toBe(true);
    const head = await fetch(`${srv.url}/data/v1/export/stock_metrics?api_key=${KEYS.alice}`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(stable(head.headers)).toEqual(stable(headBefore.headers));
    expect(head.headers.get("etag")).toBe(first.headers.get("etag"));
    const notModified = await get(
      "export/stock_metrics",
      {},
      { headers: { "If-None-Match": first.headers.get("etag")! } },
    );
    expect(notModified.status).toBe(304);
    expect(notModified.bytes.length).toBe(0);
  });

  it("Parquet of a multi-part table: DuckDB's file is kept; later exports send it with its length", async () => {
    const first = await get("export/stock_returns", { format: "parquet" });
    expect(first.status).toBe(200);
    expect(await eventually(() => existsSync(cached("stock_returns.parquet")))).toBe(true);
    expect(readFileSync(cached("stock_returns.parquet")).equals(first.bytes)).toBe(true);
    const second = await get("export/stock_returns", { format: "parquet" });
    expect(second.bytes.equals(first.bytes)).toBe(true);
    expect(stable(second.headers)).toEqual(stable(first.headers));
    expect(second.headers.get("content-length")).toBe(String(first.bytes.length));
    const path = join(tmpdir(), `export-cache-test-${process.pid}.parquet`);
    writeFileSync(path, second.bytes);
    const [got] = await rows<{ n: bigint; s: number }>(
      db.conn,
      "select count(*) as n, sum(ret) as s from read_parquet($f)",
      { f: path },
    );
    const ref = await returnsReference();
    expect(Number(got.n)).toBe(ref.n);
    expect(got.s).toBeCloseTo(ref.s, 6);
  });

  it("filtered exports and portfolio tables never read or write the cache", async () => {
    const whole = await get("export/stock_returns");
    expect(await eventually(() => existsSync(cached("stock_returns.arrow")))).toBe(true);
    writeFileSync(cached("stock_returns.arrow"), "marker");
    const ticker = reader.companies[2].ticker;
    const filters: Record<string, string>[] = [
      { tickers: ticker },
      { start_date: "2020-01-01" },
      { columns: "id,date,ret" },
    ];
    for (const params of filters) {
      const g = await get("export/stock_returns", params);
      expect(g.status).toBe(200);
      expect(g.bytes.toString()).not.toBe("marker");
      expect(tableFromIPC(g.bytes).numRows).toBeGreaterThan(0);
    }
    // every column named: the same rows as the whole table, streamed, not the file
    const all = await get("export/stock_returns", { columns: "id,date,ret" });
    expect(tableFromIPC(all.bytes).numRows).toBe(tableFromIPC(whole.bytes).numRows);
    expect((await get("export/portfolio_returns")).status).toBe(200);
    expect((await get("export/stock_returns", { tickers: ticker, format: "parquet" })).status).toBe(200);
    expect(files()).toEqual(["stock_returns.arrow"]);
  });

  it("two first exports at once: both whole, one whole file kept, no temporary file left", async () => {
    const [a, b] = await Promise.all([get("export/ratings"), get("export/ratings")]);
    expect(a.bytes.equals(b.bytes)).toBe(true);
    expect(await eventually(() => files().join() === "ratings.arrow")).toBe(true);
    expect(readFileSync(cached("ratings.arrow")).equals(a.bytes)).toBe(true);
  });
});

describe("export cache: a swap's warm-up", () => {
  it("builds the Arrow files of stock_metrics and stock_returns: the stream their exports send", async () => {
    expect(await warmExports(new ReaderSource(reader))).toEqual(["stock_metrics", "stock_returns"]);
    expect(files()).toEqual(["stock_metrics.arrow", "stock_returns.arrow"]);
    const warmed = files().map((f) => readFileSync(join(folder(), f)));
    await dropExportCaches(dataDir, "none");
    const streamed = [await get("export/stock_metrics"), await get("export/stock_returns")];
    expect(streamed.map((g) => g.status)).toEqual([200, 200]);
    // the same length and values: two streams of a table differ in a few bytes no value reads (as measured)
    const values = (b: Buffer) =>
      tableFromIPC(b)
        .toArray()
        .map((r) => JSON.stringify(r.toJSON()));
    for (const i of [0, 1]) {
      expect(warmed[i].length).toBe(streamed[i].bytes.length);
      expect(values(warmed[i])).toEqual(values(streamed[i].bytes));
    }
    // what is kept already is not written again
    expect(await eventually(() => files().length === 2)).toBe(true);
    expect(await warmExports(new ReaderSource(reader))).toEqual([]);
  });
});

describe("export cache: the export slots", () => {
  it("a cached export is sent while every slot streams; a streamed one is refused meanwhile", async () => {
    const whole = await get("export/stock_metrics");
    expect(await eventually(() => existsSync(cached("stock_metrics.arrow")))).toBe(true);
    configureExports({ maxConcurrent: 1 });
    const u = new URL(srv.url);
    const socket = net.connect(Number(u.port), u.hostname);
    socket.on("error", () => undefined);
    try {
      // a filtered export (never cached) of a wide stream, left unread: it holds the one slot
      const cols = Array.from({ length: 200 }, () => "columns=ret").join("&");
      socket.write(`GET /data/v1/export/stock_returns?${cols}&api_key=${KEYS.alice} HTTP/1.1\r\nHost: x\r\n\r\n`);
      const head = await new Promise<Buffer>((r) => socket.once("data", r));
      socket.pause();
      expect(head.subarray(0, head.indexOf("\r\n")).toString()).toBe("HTTP/1.1 200 OK");
      expect((await get("export/stock_metrics", { tickers: reader.companies[0].ticker })).status).toBe(503);
      expect((await get("export/ratings")).status).toBe(503); // whole, but not cached yet: it would stream
      const hit = await get("export/stock_metrics");
      expect(hit.status).toBe(200);
      expect(hit.bytes.equals(whole.bytes)).toBe(true);
    } finally {
      socket.destroy();
      configureExports({ maxConcurrent: 4 });
    }
  });
});

describe("export cache: what is not kept, and what goes", () => {
  it("a client gone mid-stream leaves no file", async () => {
    const u = new URL(srv.url);
    const socket = net.connect(Number(u.port), u.hostname);
    socket.on("error", () => undefined);
    socket.write(`GET /data/v1/export/prices?api_key=${KEYS.alice} HTTP/1.1\r\nHost: x\r\n\r\n`);
    const head = await new Promise<Buffer>((r) => socket.once("data", r));
    socket.pause();
    expect(head.subarray(0, head.indexOf("\r\n")).toString()).toBe("HTTP/1.1 200 OK");
    // the stream stalls on the unread socket with its temporary file begun
    expect(await eventually(() => files().some((f) => f.startsWith("prices.arrow.tmp-")))).toBe(true);
    socket.destroy();
    expect(await eventually(() => files().length === 0)).toBe(true);
    // and the whole export afterwards is kept
    const whole = await get("export/prices");
    expect(await eventually(() => existsSync(cached("prices.arrow")))).toBe(true);
    expect(readFileSync(cached("prices.arrow")).equals(whole.bytes)).toBe(true);
  });

  it("the bound: the oldest file goes when a new one would pass it; a file over it is not kept", async () => {
    const a = (await get("export/stock_metrics")).bytes.length;
    expect(await eventually(() => existsSync(cached("stock_metrics.arrow")))).toBe(true);
    utimesSync(cached("stock_metrics.arrow"), new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    const b = (await get("export/ratings")).bytes.length;
    expect(await eventually(() => existsSync(cached("ratings.arrow")))).toBe(true);
    await dropExportCaches(dataDir, "none");
    // room for the two but not a third: the oldest of the three goes
    configureExportCache({ limitBytes: a + b + 1 });
    await get("export/stock_metrics");
    expect(await eventually(() => existsSync(cached("stock_metrics.arrow")))).toBe(true);
    utimesSync(cached("stock_metrics.arrow"), new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    await get("export/ratings");
    expect(await eventually(() => files().length === 2)).toBe(true);
    await get("export/ratings", { format: "parquet" }); // ratings is one file: the snapshot's own, not kept
    await get("export/stock_metrics", { format: "parquet" });
    expect(await eventually(() => !files().includes("stock_metrics.arrow"))).toBe(true);
    expect(files()).toEqual(["ratings.arrow", "stock_metrics.parquet"]);
    // an export larger than the whole bound is sent and not kept
    configureExportCache({ limitBytes: 1000 });
    await dropExportCaches(dataDir, "none");
    expect((await get("export/stock_returns")).status).toBe(200);
    await new Promise((r) => setTimeout(r, 200));
    expect(files().filter((f) => f.startsWith("stock_returns"))).toEqual([]);
  });

  it("a swap drops other snapshots' files; prune drops those of snapshots it no longer keeps", async () => {
    await get("export/stock_metrics");
    expect(await eventually(() => existsSync(cached("stock_metrics.arrow")))).toBe(true);
    const old = join(exportCacheDir(dataDir), "20200101T000000Z-aaaaaa");
    mkdirSync(old, { recursive: true });
    writeFileSync(join(old, "stock_returns.arrow"), "an older snapshot's export");
    await pruneStore(dataDir);
    expect(existsSync(old)).toBe(false);
    expect(existsSync(cached("stock_metrics.arrow"))).toBe(true); // the published snapshot's stays
    await dropExportCaches(dataDir, "20261127T000000Z-bbbbbb"); // what the server does on a swap to it
    expect(existsSync(folder())).toBe(false);
  });

  it("EXPORT_CACHE_MB: default 4096, 0 keeps nothing, anything but a whole number refused", async () => {
    expect(loadConfig({}).exportCacheMB).toBe(4096);
    expect(loadConfig({ EXPORT_CACHE_MB: "0" }).exportCacheMB).toBe(0);
    expect(() => loadConfig({ EXPORT_CACHE_MB: "-1" })).toThrow(/EXPORT_CACHE_MB/);
    expect(() => loadConfig({ EXPORT_CACHE_MB: "1.5" })).toThrow(/EXPORT_CACHE_MB/);
    expect(() => configureExports({ maxConcurrent: 4, cacheMB: -1 })).toThrow(RangeError);
    configureExports({ maxConcurrent: 4, cacheMB: 0 });
    expect((await get("export/stock_metrics")).status).toBe(200);
    await new Promise((r) => setTimeout(r, 200));
    expect(files()).toEqual([]);
  });
});
