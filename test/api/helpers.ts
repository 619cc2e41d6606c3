// A real server on an ephemeral port over the fixture, with the pino output captured.
import http from "node:http";
import { Writable } from "node:stream";
import { tableFromIPC } from "apache-arrow";
import { expect } from "vitest";
import type { AppDeps } from "../../api/app.ts";
import { type RunningServer, startServer } from "../../api/server.ts";
import { createAccessLogger, createLogger } from "../../jobs/logger.ts";
import { alignBenchmark, metricRows } from "../../pipeline/analytics/index.ts";
import type { Snapshot } from "../../pipeline/store/snapshot/model.ts";
import { buildCatalog, buildFixture, type Fixture, type FixtureOptions, KEYS, type MemoryCatalog } from "./fixture.ts";

export interface TestServer extends RunningServer {
  fx: Fixture;
  catalog: MemoryCatalog;
  logs: string[];
  current: { snapshot: Snapshot | null };
  get(path: string, params?: Record<string, string | number>, headers?: Record<string, string>): Promise<Res>;
  api(path: string, params?: Record<string, string | number>, headers?: Record<string, string>): Promise<Res>;
}

export interface Res {
  status: number;
  headers: Headers;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read any path of the parsed body and assert on it
  json: any;
}

export function fixtureWithMetrics(opts: FixtureOptions = {}): Fixture {
  return buildFixture({ metrics: metricRows, alignBenchmark, ...opts });
}

export async function startTestServer(
  opts: {
    fx?: Fixture;
    rateLimit?: AppDeps["rateLimit"];
    snapshot?: "none";
    requestRebalance?: AppDeps["requestRebalance"];
    deps?: Partial<AppDeps>;
  } = {},
): Promise<TestServer> {
  const fx = opts.fx ?? fixtureWithMetrics();
  const catalog = buildCatalog(fx);
  const logs: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      logs.push(String(chunk));
      cb();
    },
  });
  // The loggers `npm start` uses, writing here instead of stdout.
  const logger = createLogger("debug", stream);
  const accessLogger = createAccessLogger("debug", stream);
  const current = { snapshot: opts.snapshot === "none" ? null : (fx.snapshot as Snapshot | null) };
  const srv = await startServer({
    port: 0,
    host: "127.0.0.1",
    deps: {
      snapshot: () => current.snapshot,
      catalog,
      catalogWriter: catalog,
      requestRebalance: opts.requestRebalance,
      logger,
      accessLogger,
      rateLimit: opts.rateLimit,
      ...opts.deps,
    },
  });
  const get = async (
    path: string,
    params: Record<string, string | number> = {},
    headers: Record<string, string> = {},
  ): Promise<Res> => {
    const u = new URL(srv.url + path);
    for (const [k, v] of Object.entries(params)) u.searchParams.set(k, String(v));
    return readRes(await fetch(u, { headers }));
  };
  return {
    ...srv,
    fx,
    catalog,
    logs,
    current,
    get,
    api: (path, params = {}, headers = {}) => get(`/data/v1/${path}`, { api_key: KEYS.alice, ...params }, headers),
  };
}

/** Status, headers, text and (when it parses) JSON of a response. */
export async function readRes(r: Response): Promise<Res> {
  const text = await r.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: r.status, headers: r.headers, text, json };
}

/** Minimal RFC 4180 reader for assertions. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") {
      row.push(field);
      field = "";
    } else if (c === "\r" && text[i + 1] === "\n") {
      row.push(field);
      rows.push(row);
      row = [];
      field = "";
      i++;
    } else field += c;
  }
  if (field !== "" || row.length) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

/** A GET with the request target sent exactly as given (fetch would normalise it). */
export function rawGet(base: string, target: string, headers: Record<string, string> = {}): Promise<Res> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: target, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers))
          if (v !== undefined) h.set(k, Array.isArray(v) ? v.join(", ") : v);
        resolve({ status: res.statusCode ?? 0, headers: h, text, json });
      });
    });
    req.on("error", reject);
    req.end();
  });
}

/**
 * The two ways a read is served, for tests that must hold on both: Express (the fast path off:
 * responseCacheBytes 0) and the node:http fast path (the answer cached first by `prime`).
 */
export const SERVING_PATHS = [
  { name: "Express", fast: false, deps: { responseCacheBytes: 0 } as Partial<AppDeps> },
  { name: "fast path", fast: true, deps: {} as Partial<AppDeps> },
] as const;
export type ServingPath = (typeof SERVING_PATHS)[number];

/** The header the fast path marks its answers with (api/fast/fast-path.ts FAST_HEADER). */
export const FAST_HEADER = "x-response-cache";

/**
 * On the fast path: asks `target` (a request target with its key) until the fast path answers it
 * from the cache (a fill waits for its compressions, so the first repeat may still miss); returns
 * that answer. On Express: one request. Throws when the answer never comes from the cache, unless
 * `mustHit` is false (then an answer the cache does not keep, such as an error, is returned as it is).
 */
export async function prime(
  srv: TestServer,
  p: ServingPath,
  target: string,
  headers: Record<string, string> = {},
  mustHit = true,
): Promise<Res> {
  for (let i = 0; i < 50; i++) {
    const r = await rawGet(srv.url, target, headers);
    if (!p.fast || r.headers.get(FAST_HEADER) === "hit") return r;
    if (!mustHit && (r.status !== 200 || i >= 3)) return r;
    if (r.status !== 200) throw new Error(`prime ${target}: ${r.status}`);
    await new Promise((done) => setTimeout(done, 5));
  }
  throw new Error(`prime ${target}: never answered by the fast path`);
}

/** One read as JSON and as Arrow (alice's key), both 200: the JSON body, the Arrow table, the Arrow response. */
export async function jsonAndArrow(base: string, path: string, params: Record<string, string> = {}) {
  const u = new URL(`${base}/data/v1/${path}`);
  for (const [k, v] of Object.entries({ api_key: KEYS.alice, ...params })) u.searchParams.set(k, v);
  const j = await fetch(u);
  u.searchParams.set("format", "arrow");
  const a = await fetch(u);
  expect([j.status, a.status], path).toEqual([200, 200]);
  return { json: await j.json(), table: tableFromIPC(new Uint8Array(await a.arrayBuffer())), res: a };
}
