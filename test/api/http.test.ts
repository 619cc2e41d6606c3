import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildFixture, KEYS } from "./fixture.ts";
import { FAST_HEADER, fixtureWithMetrics, prime, SERVING_PATHS, startTestServer, type TestServer } from "./helpers.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s?.close());

const ALL_ENDPOINTS = (t: string) => [
  "stock_ratings",
  `stock_ratings/${t}`,
  `stock_financials/${t}`,
  `stock_metrics/${t}`,
  `stock_performance/${t}`,
  "portfolios",
  "portfolios/101",
  "portfolio_holdings/101",
  "portfolio_trades/101?value=1000",
  "portfolio_metrics/101",
  "portfolio_performance/101",
  "watchlists",
  "watchlists/1",
  "watchlist_items/1",
  "benchmarks",
];
const call = (
  srv: TestServer,
  path: string,
  params: Record<string, string> = {},
  headers: Record<string, string> = {},
) => {
  const [p, q] = path.split("?");
  return srv.get(`/data/v1/${p}`, { ...Object.fromEntries(new URLSearchParams(q ?? "")), ...params }, headers);
};

describe("every endpoint", () => {
  it("answers 200 in JSON and CSV, with and without the trailing slash", async () => {
    const t = s.fx.snapshot.companies[0].ticker;
    for (const path of ALL_ENDPOINTS(t)) {
      for (const slash of ["", "/"]) {
        const [p, q] = path.split("?");
        const full = `${p}${slash}${q ? `?${q}` : ""}`;
        const j = await call(s, full, { api_key: KEYS.alice });
        expect(j.status, full).toBe(200);
        expect(j.headers.get("content-type"), full).toMatch(/^application\/json/);
        expect(j.json, full).toBeDefined();
        const c = await call(s, full, { api_key: KEYS.alice, format: "csv" });
        expect(c.status, full).toBe(200);
        expect(c.headers.get("content-type")).toBe("text/csv; charset=utf-8");
        expect(c.headers.get("content-disposition")).toBe(`attachment; filename="${p.split("/")[0]}.csv"`);
        expect(c.text.split("\r\n")[0].length, full).toBeGreaterThan(0);
      }
    }
  });

  it("unknown paths are JSON 404s", async () => {
    const r = await s.get("/data/v1/nothing_here", { api_key: KEYS.alice });
    expect(r.status).toBe(404);
    expect(r.json.error.code).toBe("not_found");
  });
});

/** Endpoints whose answers the fast path keeps (api/fast/fill.ts SHAREABLE_ROUTES). */
const SHAREABLE = new Set(["stock_ratings", "stock_financials", "stock_metrics", "stock_performance", "benchmarks"]);
// (portfolios: the list defaults to the caller's own, private=true, which is never cached)
const shareable = (path: string) => SHAREABLE.has(path.split(/[/?]/)[0]);
/** The request target of an endpoint path with extra parameters. */
const target = (path: string, params: Record<string, string>) => {
  const [p, q] = path.split("?");
  const u = new URLSearchParams(q ?? "");
  for (const [k, v] of Object.entries(params)) u.set(k, v);
  return `/data/v1/${p}?${u}`;
};

// The key and scope checks on both serving paths: on the fast path each endpoint's answer is
// cached first (by a full key), then asked for without a key, with a bad one, with too few scopes.
describe.each(SERVING_PATHS)("keys and scopes ($name)", (sp) => {
  let srv: TestServer;
  beforeAll(async () => {
    srv = await startTestServer({ fx: s.fx, deps: sp.deps });
  });
  afterAll(() => srv?.close());
  const warm = async (path: string) => {
    if (sp.fast && shareable(path)) await prime(srv, sp, target(path, { api_key: KEYS.alice }));
  };

  it("401 without a key, with an unknown key, with a revoked key; the header api_key works", async () => {
    const t = srv.fx.snapshot.companies[0].ticker;
    for (const path of ALL_ENDPOINTS(t)) {
      await warm(path);
      const none = await call(srv, path);
      expect(none.status, path).toBe(401);
      expect(none.json.error).toMatchObject({ status: 401, code: "unauthorized" });
      expect((await call(srv, path, { api_key: "not-a-key" })).status).toBe(401);
      expect((await call(srv, path, { api_key: KEYS.revoked })).status).toBe(401);
      const header = await call(srv, path, {}, { api_key: KEYS.alice });
      expect(header.status, path).toBe(200);
      if (sp.fast) expect(header.headers.get(FAST_HEADER), path).toBe(shareable(path) ? "hit" : null);
    }
  });

  it("403 names the missing scope", async () => {
    const t = srv.fx.snapshot.companies[0].ticker;
    const want: Record<string, string> = {
      stock_financials: "financials:read",
      stock_metrics: "analytics:read",
      stock_performance: "analytics:read",
      portfolios: "portfolios:read",
      portfolio_holdings: "portfolios:read",
      portfolio_trades: "portfolios:read",
      portfolio_metrics: "portfolios:read",
      portfolio_performance: "portfolios:read",
      watchlists: "watchlists:read",
      watchlist_items: "watchlists:read",
    };
    for (const path of ALL_ENDPOINTS(t)) {
      await warm(path);
      const r = await call(srv, path, { api_key: KEYS.aliceRatingsOnly });
      const ep = path.split(/[/?]/)[0];
      if (ep === "stock_ratings" || ep === "benchmarks") expect(r.status, path).toBe(200);
      else {
        expect(r.status, path).toBe(403);
        expect(r.json.error.code).toBe("forbidden");
        expect(r.json.error.message).toContain(want[ep]);
      }
    }
  });
});

describe("snapshot", () => {
  it("503 on every endpoint and /healthz before a snapshot; swaps are picked up per request", async () => {
    const srv = await startTestServer({ fx: s.fx, snapshot: "none" });
    try {
      const h = await srv.get("/healthz");
      expect(h.status).toBe(503);
      const t = s.fx.snapshot.companies[0].ticker;
      for (const path of ALL_ENDPOINTS(t)) {
        const r = await call(srv, path, { api_key: KEYS.alice });
        expect(r.status, path).toBe(503);
        expect(r.json.error).toMatchObject({ status: 503, code: "unavailable" });
      }
      srv.current.snapshot = s.fx.snapshot;
      const ok = await srv.get("/healthz");
      expect(ok.status).toBe(200);
      expect(ok.json).toEqual({ status: "ok", snapshot: s.fx.snapshot.id });
      const first = await call(srv, "stock_ratings", { api_key: KEYS.alice, limit: "1" });
      const other = buildFixture({ seed: 7, id: "snap-fixture-2" }).snapshot;
      srv.current.snapshot = other;
      expect((await srv.get("/healthz")).json.snapshot).toBe("snap-fixture-2");
      const second = await call(srv, "stock_ratings", { api_key: KEYS.alice, limit: "1" });
      expect(second.headers.get("etag")).not.toBe(first.headers.get("etag"));
      const top = other.ratingsByDate
        .get(other.ratingDates.at(-1)!)!
        .reduce((a, b) =>
          b.total_rating > a.total_rating || (b.total_rating === a.total_rating && b.ticker < a.ticker) ? b : a,
        );
      expect(second.json[0].stock.ticker).toBe(top.ticker);
    } finally {
      await srv.close();
    }
  });
});

describe.each(SERVING_PATHS)("ETag ($name)", (sp) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ deps: sp.deps });
  });
  afterAll(() => s?.close());

  it("If-None-Match → 304 with no body; differs by params and format", async () => {
    const a = await prime(s, sp, `/data/v1/stock_ratings?limit=7&api_key=${KEYS.alice}`);
    const tag = a.headers.get("etag")!;
    expect(tag).toMatch(/^W\/".+"$/);
    const b = await s.api("stock_ratings", { limit: 7 }, { "if-none-match": tag });
    expect(b.status).toBe(304);
    expect(b.text).toBe("");
    expect(b.headers.get(FAST_HEADER)).toBe(sp.fast ? "hit" : null);
    expect((await s.api("stock_ratings", { limit: 7 }, { "if-none-match": `"other", ${tag}` })).status).toBe(304);
    expect((await s.api("stock_ratings", { limit: 8 }, { "if-none-match": tag })).status).toBe(200);
    expect((await s.api("stock_ratings", { limit: 7, format: "csv" }, { "if-none-match": tag })).status).toBe(200);
  });

  it("catalog-backed bodies are tagged by content", async () => {
    const a = await s.api("watchlists");
    const b = await s.api("watchlists", {}, { "if-none-match": a.headers.get("etag")! });
    expect(b.status).toBe(304);
    const p = await s.api("portfolios/201");
    expect((await s.api("portfolios/201", {}, { "if-none-match": p.headers.get("etag")! })).status).toBe(304);
  });
});

describe.each(SERVING_PATHS)("logs ($name)", (sp) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ deps: sp.deps });
  });
  afterAll(() => s?.close());

  it("never contain the key, from the query (any encoding) or the header; carry request ids", async () => {
    const t = s.fx.snapshot.companies[0].ticker;
    // on the fast path these answers come from the cache: their lines are written there
    await prime(s, sp, `/data/v1/stock_ratings?limit=1&api_key=${KEYS.alice}`);
    await prime(s, sp, "/data/v1/benchmarks", { api_key: KEYS.bob });
    s.logs.length = 0;
    await s.api("stock_ratings", { limit: 1 });
    await s.get("/data/v1/benchmarks", {}, { api_key: KEYS.bob, "x-request-id": "req-abc-123" });
    await s.get(`/data/v1/stock_metrics/${t}?api%5Fkey=${KEYS.bob}`);
    await s.get(`/data/v1/stock_ratings/NOPE?api_key=${KEYS.aliceRatingsOnly}&x=1`);
    await s.get(`/data/v1/stock_financials/${t}?api_key=${KEYS.aliceRatingsOnly}`);
    await s.get(`/data/v1/stock_ratings?limit=0&api_key=${encodeURIComponent(KEYS.alice)}`);
    await s.get(`/data/v1/stock_ratings?api_key=${KEYS.revoked}`);
    await new Promise((r) => setTimeout(r, 50));
    const text = s.logs.join("");
    expect(text.length).toBeGreaterThan(0);
    for (const k of Object.values(KEYS)) expect(text).not.toContain(k);
    expect(text).toContain("api_key=[redacted]");
    expect(text).toContain("api%5Fkey=[redacted]");
    const lines = s.logs.map((l) => JSON.parse(l));
    const tagged = lines.find((l) => l.req?.id === "req-abc-123");
    expect(tagged?.res?.statusCode).toBe(200);
    expect(tagged?.req?.url).toBe("/data/v1/benchmarks");
    // the fast path's line (the answer primed above) carries the key redacted as well
    const hit = lines.find((l) => l.req?.url === "/data/v1/stock_ratings?api_key=[redacted]&limit=1");
    expect(hit?.res?.statusCode).toBe(200);
    const limited = lines.find((l) => l.req?.url?.startsWith("/data/v1/stock_ratings?limit=0&"));
    expect(limited?.req?.url).toBe("/data/v1/stock_ratings?limit=0&api_key=[redacted]");
    expect(lines.filter((l) => l.req).every((l) => typeof l.req.id === "string" && l.req.id.length > 0)).toBe(true);
  });
});

describe.each(SERVING_PATHS)("rate limit ($name)", (sp) => {
  it("429 with Retry-After and X-RateLimit-* after the limit, per key", async () => {
    const srv = await startTestServer({ fx: s.fx, rateLimit: { points: 5, durationSec: 60 }, deps: sp.deps });
    try {
      // on the fast path the answer is cached (by another key, its own limit) before the five
      if (sp.fast) await prime(srv, sp, `/data/v1/benchmarks?api_key=${KEYS.bob}`);
      for (let i = 0; i < 5; i++) {
        const r = await srv.api("benchmarks");
        expect(r.status).toBe(200);
        expect(r.headers.get(FAST_HEADER)).toBe(sp.fast ? "hit" : null);
        expect(r.headers.get("x-ratelimit-limit")).toBe("5");
        expect(r.headers.get("x-ratelimit-remaining")).toBe(String(4 - i));
      }
      const r = await srv.api("benchmarks");
      expect(r.status).toBe(429);
      expect(r.json.error).toMatchObject({ status: 429, code: "rate_limited" });
      expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(r.headers.get("x-ratelimit-remaining")).toBe("0");
      expect(Number(r.headers.get("x-ratelimit-reset"))).toBeGreaterThan(Date.now() / 1000);
      expect((await srv.api("benchmarks", { api_key: KEYS.aliceRatingsOnly })).status).toBe(200);
    } finally {
      await srv.close();
    }
  });
});

describe("internal errors", () => {
  it("500 without details; the detail goes to the log", async () => {
    const fx = fixtureWithMetrics({ stocks: 20, days: 80, metricTickers: [] });
    const srv = await startTestServer({ fx });
    try {
      srv.catalog.watchlistsOf = () => {
        throw new Error("disk on fire at /secret/path");
      };
      const r = await srv.api("watchlists");
      expect(r.status).toBe(500);
      expect(r.json).toEqual({
        error: { status: 500, code: "internal_error", message: "internal server error", details: [] },
      });
      expect(r.text).not.toContain("secret");
      await new Promise((res) => setTimeout(res, 20));
      expect(srv.logs.join("")).toContain("disk on fire");
    } finally {
      await srv.close();
    }
  });

  it("a malformed path encoding is a 400, not a 500", async () => {
    const r = await s.get("/data/v1/stock_ratings/%E0%A4%A", { api_key: KEYS.alice });
    expect(r.status).toBe(400);
  });

  it("a repeated parameter is a 400, not a 500", async () => {
    const r = await s.get(`/data/v1/stock_ratings?api_key=${KEYS.alice}&limit=5&limit=6&search=a&search=b`);
    expect(r.status).toBe(400);
  });
});

describe("openapi and metrics", () => {
  it("/data/v1/openapi.json: 3.1, the operations and the export, parameters from the zod schemas", async () => {
    const r = await s.get("/data/v1/openapi.json");
    expect(r.status).toBe(200);
    const doc = r.json;
    expect(doc.openapi).toBe("3.1.0");
    // The document's version is the service's (package.json), not a number of its own.
    expect(doc.info.version).toBe(
      JSON.parse(readFileSync(join(import.meta.dirname, "../../package.json"), "utf8")).version,
    );
    const ops = Object.values(doc.paths as Record<string, { get: unknown }>).map((p) => p.get);
    // §4.2's fifteen, export, portfolio_rebalances, rating_evidence and the two webhook reads
    expect(ops).toHaveLength(20);
    const evidence = doc.paths["/data/v1/rating_evidence"].get;
    expect(evidence["x-required-scopes"]).toEqual(["ratings:read"]);
    const horizon = evidence.parameters.find((p: { name: string }) => p.name === "horizon");
    expect(horizon.schema).toMatchObject({ enum: ["1", "3", "6", "12"], default: "1" });
    expect(evidence.parameters.find((p: { name: string }) => p.name === "rating").schema.enum).toContain(
      "momentum_12_1_baseline",
    );
    const exp = doc.paths["/data/v1/export/{table}"].get;
    expect(exp.parameters.find((p: { name: string }) => p.name === "format").schema.enum).toEqual(["arrow", "parquet"]);
    expect(Object.keys(exp.responses["200"].content)).toEqual([
      "application/vnd.apache.arrow.stream",
      "application/vnd.apache.parquet",
    ]);
    const list = doc.paths["/data/v1/stock_ratings"].get;
    const limit = list.parameters.find((p: { name: string }) => p.name === "limit");
    expect(limit.schema).toMatchObject({ type: "integer", minimum: 1, maximum: 200, default: 50 });
    const order = list.parameters.find((p: { name: string }) => p.name === "order_by");
    expect(order.schema.enum).toContain("-total_rating");
    expect(list.parameters.find((p: { name: string }) => p.name === "format").schema.enum).toEqual([
      "json",
      "csv",
      "arrow",
    ]);
    expect(list.responses["200"].content).toHaveProperty(["application/vnd.apache.arrow.stream"]);
    const trades = doc.paths["/data/v1/portfolio_trades/{id}"].get;
    expect(trades.parameters.find((p: { name: string }) => p.name === "value").required).toBe(true);
    expect(trades.parameters.find((p: { name: string }) => p.name === "id")).toMatchObject({
      in: "path",
      required: true,
    });
    const perf = doc.paths["/data/v1/stock_performance/{ticker}"].get;
    expect(perf.parameters.find((p: { name: string }) => p.name === "type").schema.enum).toHaveLength(9);
    expect(JSON.stringify(doc)).not.toContain("#/$defs/");
  });

  it("/metrics: request counts and latency per route, snapshot age", async () => {
    await s.api("benchmarks");
    const r = await s.get("/metrics");
    expect(r.status).toBe(200);
    expect(r.text).toMatch(/http_requests_total\{route="benchmarks",method="GET",status="200"\} \d+/);
    expect(r.text).toMatch(/http_request_duration_seconds_bucket\{le="[^"]+",route="benchmarks",method="GET"\}/);
    expect(r.text).toMatch(/snapshot_age_seconds \d+/);
  });
});
