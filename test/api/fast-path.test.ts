// The node:http fast path (api/fast/): a repeated read is answered from the response cache with
// the same status, headers and bytes as Express's answer, and every check a request must pass
// still runs there. Expected values come from the Express answer to the same request (the
// reference: the fast path must not change a byte but X-Request-Id and its own marker) and from the
// fixture's users (test/api/fixture.ts: alice and bob hold keys with the same scopes).
import { createHash } from "node:crypto";
import http from "node:http";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RateLimited } from "../../api/errors.ts";
import { createCostBudget, createLimiter } from "../../api/rate-limit.ts";
import { KEYS } from "./fixture.ts";
import {
  FAST_HEADER,
  fixtureWithMetrics,
  prime,
  rawGet,
  SERVING_PATHS,
  startTestServer,
  type TestServer,
} from "./helpers.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s?.close());

const FAST = SERVING_PATHS[1];
const RATINGS = `/data/v1/stock_ratings?limit=5&order_by=-total_rating&api_key=${KEYS.alice}`;
const headersOf = (h: Headers) => {
  const out: Record<string, string> = {};
  h.forEach((v, k) => {
    if (k !== "x-request-id" && k !== FAST_HEADER && k !== "date" && k !== "keep-alive" && k !== "connection")
      out[k] = v;
  });
  return out;
};

describe("answers", () => {
  it("the fast path's answer is Express's: status, headers, bytes (JSON and CSV)", async () => {
    for (const target of [RATINGS, `${RATINGS}&format=csv`, `/data/v1/benchmarks?api_key=${KEYS.alice}`]) {
      const first = await rawGet(s.url, target);
      expect(first.headers.get(FAST_HEADER), target).toBeNull();
      const fast = await prime(s, FAST, target);
      expect(fast.status).toBe(200);
      expect(fast.text).toBe(first.text);
      expect(headersOf(fast.headers)).toEqual(headersOf(first.headers));
      expect(fast.headers.get("x-request-id")).not.toBe(first.headers.get("x-request-id"));
    }
  });

  it("the query is normalised: parameter order and the key's place do not matter", async () => {
    await prime(s, FAST, RATINGS);
    const r = await rawGet(s.url, `/data/v1/stock_ratings?api_key=${KEYS.alice}&order_by=-total_rating&limit=5`);
    expect(r.headers.get(FAST_HEADER)).toBe("hit");
    // the key in the header instead of the query: the same answer
    const h = await rawGet(s.url, "/data/v1/stock_ratings?order_by=-total_rating&limit=5", { api_key: KEYS.alice });
    expect(h.headers.get(FAST_HEADER)).toBe("hit");
  });

  it("each encoding is the cached body compressed (br, gzip), the same bytes once decoded", async () => {
    const target = `/data/v1/stock_ratings?limit=50&api_key=${KEYS.alice}`;
    const plain = await prime(s, FAST, target);
    expect(plain.text.length).toBeGreaterThan(1024);
    for (const [coding, decode] of [
      ["br", brotliDecompressSync],
      ["gzip", gunzipSync],
    ] as const) {
      const raw = await new Promise<{ enc: string | undefined; body: Buffer; hit: string | undefined }>(
        (resolve, reject) => {
          const u = new URL(s.url + target);
          http
            .get({ host: u.hostname, port: u.port, path: target, headers: { "accept-encoding": coding } }, (res) => {
              const chunks: Buffer[] = [];
              res.on("data", (c: Buffer) => chunks.push(c));
              res.on("end", () =>
                resolve({
                  enc: res.headers["content-encoding"],
                  body: Buffer.concat(chunks),
                  hit: res.headers[FAST_HEADER] as string | undefined,
                }),
              );
            })
            .on("error", reject);
        },
      );
      expect(raw.hit).toBe("hit");
      expect(raw.enc).toBe(coding);
      expect(decode(raw.body).toString("utf8")).toBe(plain.text);
    }
  });

  it("HEAD is answered with the GET's headers and no body", async () => {
    const get = await prime(s, FAST, RATINGS);
    const u = new URL(s.url);
    const head = await new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((done, fail) =>
      http
        .request({ host: u.hostname, port: u.port, path: RATINGS, method: "HEAD" }, (res) => {
          let body = "";
          res.on("data", (c: Buffer) => (body += c.toString()));
          res.on("end", () => done({ status: res.statusCode ?? 0, headers: res.headers, body }));
        })
        .on("error", fail)
        .end(),
    );
    expect(head.status).toBe(200);
    expect(head.headers[FAST_HEADER]).toBe("hit");
    expect(head.headers["content-length"]).toBe(String(Buffer.byteLength(get.text)));
    expect(head.headers.etag).toBe(get.headers.get("etag"));
    expect(head.body).toBe("");
  });

  it("If-None-Match → 304 without a body on the fast path", async () => {
    const a = await prime(s, FAST, RATINGS);
    const tag = a.headers.get("etag")!;
    const b = await rawGet(s.url, RATINGS, { "if-none-match": `"other", ${tag}` });
    expect(b.status).toBe(304);
    expect(b.text).toBe("");
    expect(b.headers.get(FAST_HEADER)).toBe("hit");
    expect(b.headers.get("etag")).toBe(tag);
    expect(b.headers.get("x-content-type-options")).toBe("nosniff");
  });

  it("metrics count fast answers per route, and the fast answers themselves", async () => {
    await prime(s, FAST, RATINGS);
    const before = (await s.get("/metrics")).text;
    const count = (text: string, re: RegExp) => Number(text.match(re)?.[1] ?? 0);
    const route = /http_requests_total\{route="stock_ratings_list",method="GET",status="200"\} (\d+)/;
    const fast = /api_response_cache_fast_total (\d+)/;
    for (let i = 0; i < 3; i++) expect((await rawGet(s.url, RATINGS)).headers.get(FAST_HEADER)).toBe("hit");
    const after = (await s.get("/metrics")).text;
    expect(count(after, route) - count(before, route)).toBe(3);
    expect(count(after, fast) - count(before, fast)).toBe(3);
    expect(after).toMatch(/api_response_cache_bytes [1-9]/);
  });
});

describe("who asks", () => {
  it("two users with the same scopes never receive each other's answers", async () => {
    // alice's own portfolio (201) and lists: answered by Express every time, never from the cache
    for (let i = 0; i < 3; i++) {
      const own = await s.api("portfolio_holdings/201");
      expect(own.status).toBe(200);
      expect(own.headers.get(FAST_HEADER)).toBeNull();
    }
    const bob = await s.api("portfolio_holdings/201", { api_key: KEYS.bob });
    expect(bob.status).toBe(404);
    for (const path of ["watchlists", "portfolios?private=true", "portfolios/201"]) {
      const [p, q] = path.split("?");
      const params = Object.fromEntries(new URLSearchParams(q ?? ""));
      const a1 = await s.api(p, params);
      const a2 = await s.api(p, params);
      const b = await s.api(p, { ...params, api_key: KEYS.bob });
      expect(a2.headers.get(FAST_HEADER), path).toBeNull();
      expect(b.headers.get(FAST_HEADER), path).toBeNull();
      expect(a2.text, path).toBe(a1.text);
      expect(b.text, path).not.toBe(a1.text);
    }
    // a shared read primed by alice is served to bob from the cache: it does not depend on who asks
    await prime(s, FAST, RATINGS);
    const shared = await rawGet(s.url, RATINGS.replace(KEYS.alice, KEYS.bob));
    expect(shared.headers.get(FAST_HEADER)).toBe("hit");
  });

  it("keys with other scope sets have answers of their own", async () => {
    await prime(s, FAST, RATINGS);
    const limited = await rawGet(s.url, RATINGS.replace(KEYS.alice, KEYS.aliceRatingsOnly));
    expect(limited.status).toBe(200);
    expect(limited.headers.get(FAST_HEADER)).toBeNull(); // first of its scope set: Express
  });
});

describe("snapshots and memory", () => {
  it("a swap drops the old snapshot's answers; the new snapshot's are answered", async () => {
    const srv = await startTestServer();
    try {
      const target = `/data/v1/stock_ratings?limit=3&api_key=${KEYS.alice}`;
      const old = await prime(srv, FAST, target);
      const other = fixtureWithMetrics({ seed: 7, id: "snap-other", stocks: 40, metricTickers: [] });
      srv.current.snapshot = other.snapshot;
      const after = await rawGet(srv.url, target);
      expect(after.headers.get(FAST_HEADER)).toBeNull();
      expect(after.text).not.toBe(old.text);
      const metrics = (await srv.get("/metrics")).text;
      // the cache holds the new answer only (both are under 1 KiB: no compressed forms beside them)
      expect(Buffer.byteLength(old.text) + Buffer.byteLength(after.text)).toBeLessThan(2048);
      expect(metrics).toContain(`api_response_cache_bytes ${Buffer.byteLength(after.text)}\n`);
      expect((await prime(srv, FAST, target)).text).toBe(after.text);
    } finally {
      await srv.close();
    }
  });

  it("memory is bounded by bytes: the cache never holds more than its budget", async () => {
    const budget = 64 * 1024;
    const srv = await startTestServer({ deps: { responseCacheBytes: budget } });
    try {
      for (let n = 1; n <= 40; n++) {
        const target = `/data/v1/stock_ratings?limit=${n}&api_key=${KEYS.alice}`;
        await rawGet(srv.url, target);
        await rawGet(srv.url, target);
      }
      await new Promise((r) => setTimeout(r, 100));
      const bytes = Number((await srv.get("/metrics")).text.match(/api_response_cache_bytes (\d+)/)?.[1]);
      expect(bytes).toBeGreaterThan(0);
      expect(bytes).toBeLessThanOrEqual(budget);
    } finally {
      await srv.close();
    }
  });

  it("RESPONSE_CACHE_MB 0 (responseCacheBytes 0) turns the fast path off", async () => {
    const srv = await startTestServer({ fx: s.fx, deps: { responseCacheBytes: 0 } });
    try {
      for (let i = 0; i < 3; i++) expect((await rawGet(srv.url, RATINGS)).headers.get(FAST_HEADER)).toBeNull();
    } finally {
      await srv.close();
    }
  });
});

describe("GraphQL automatic persisted queries", () => {
  const Q = "{ stockRatings(first: 3) { edges { node { stock { ticker } totalRating } } } }";
  const hash = createHash("sha256").update(Q).digest("hex");
  const ext = (h: string) => JSON.stringify({ persistedQuery: { version: 1, sha256Hash: h } });
  const getTarget = (h: string) => `/graphiql?extensions=${encodeURIComponent(ext(h))}`;
  const headers = { api_key: KEYS.alice, accept: "application/json" };

  it("a hash alone is PERSISTED_QUERY_NOT_FOUND until the query was sent with it; then GET runs it", async () => {
    const srv = await startTestServer({ fx: s.fx });
    try {
      const miss = await rawGet(srv.url, getTarget(hash), headers);
      expect(miss.status).toBe(404);
      expect(miss.json.errors[0]).toMatchObject({
        message: "PersistedQueryNotFound",
        extensions: { code: "PERSISTED_QUERY_NOT_FOUND" },
      });
      const reg = await fetch(`${srv.url}/graphiql`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify({ query: Q, extensions: JSON.parse(ext(hash)) }),
      });
      const registered = (await reg.json()) as {
        data: { stockRatings: { edges: unknown[] } };
        extensions: { cost: { requested: number; limit: number } };
      };
      expect(registered.data.stockRatings.edges).toHaveLength(3);
      const fast = await prime(srv, FAST, getTarget(hash), headers);
      expect(fast.json.data).toEqual(registered.data);
      expect(fast.json.extensions.cost.requested).toBeGreaterThan(0);
      // the fast path writes the cost report itself: the same fields and types as graphql-http's
      expect(fast.json.extensions).toEqual({
        cost: {
          requested: registered.extensions.cost.requested,
          limit: registered.extensions.cost.limit,
          remaining: registered.extensions.cost.limit - 2 * registered.extensions.cost.requested,
          resetAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        },
      });
      expect(fast.headers.get("content-type")).toBe("application/json; charset=utf-8");
      expect(fast.headers.get("x-content-type-options")).toBe("nosniff");
      // the budget is spent on the fast path too
      const again = await rawGet(srv.url, getTarget(hash), headers);
      expect(again.json.extensions.cost.remaining).toBe(
        fast.json.extensions.cost.remaining - fast.json.extensions.cost.requested,
      );
      // another key of the same scope set shares the answer; no key is a 401
      const bob = await rawGet(srv.url, getTarget(hash), { ...headers, api_key: KEYS.bob });
      expect(bob.headers.get(FAST_HEADER)).toBe("hit");
      const none = await rawGet(srv.url, getTarget(hash), { accept: "application/json" });
      expect(none.status).toBe(401);
      expect(none.json.errors[0].extensions.code).toBe("UNAUTHENTICATED");
    } finally {
      await srv.close();
    }
  });

  it("a query whose hash is not its SHA-256 is refused; version 1 only", async () => {
    const bad = await fetch(`${s.url}/graphiql`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ query: Q, extensions: JSON.parse(ext("0".repeat(64))) }),
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { errors: { message: string }[] }).errors[0].message).toBe(
      "provided sha does not match query",
    );
    const v2 = await rawGet(
      s.url,
      `/graphiql?extensions=${encodeURIComponent(ext(hash).replace('"version":1', '"version":2'))}`,
      headers,
    );
    expect(v2.status).toBe(400);
    expect(v2.json.errors[0].extensions.code).toBe("PERSISTED_QUERY_NOT_SUPPORTED");
  });

  it("the rate limit holds on the fast path: 429 past it", async () => {
    const srv = await startTestServer({ fx: s.fx, rateLimit: { points: 6, durationSec: 60 } });
    try {
      await fetch(`${srv.url}/graphiql`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify({ query: Q, extensions: JSON.parse(ext(hash)) }),
      });
      const codes: number[] = [];
      for (let i = 0; i < 6; i++) codes.push((await rawGet(srv.url, getTarget(hash), headers)).status);
      expect(codes).toEqual([200, 200, 200, 200, 200, 429]);
      const refused = await rawGet(srv.url, getTarget(hash), headers);
      expect(refused.json.errors[0].extensions.code).toBe("RATE_LIMITED");
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
    } finally {
      await srv.close();
    }
  });
});

describe("the fast path's in-memory limits", () => {
  // The fast path counts through `now` (the same turn), Express through the promise: both must
  // spend from one store, or a key would get its limit twice. Expected counts: the limit's own
  // arithmetic (points minus the requests made so far).
  it("the request limit's two forms count in one store; past the limit both refuse", async () => {
    const limit = createLimiter({ points: 4, durationSec: 60 })!;
    expect(limit.now).toBeTypeOf("function");
    expect(limit.now!("k")["X-RateLimit-Remaining"]).toBe("3");
    expect((await limit("k"))?.["X-RateLimit-Remaining"]).toBe("2");
    expect(limit.now!("k")["X-RateLimit-Remaining"]).toBe("1");
    expect((await limit("k"))?.["X-RateLimit-Remaining"]).toBe("0");
    expect(() => limit.now!("k")).toThrow(RateLimited);
    await expect(limit("k")).rejects.toBeInstanceOf(RateLimited);
    expect(limit.now!("other")["X-RateLimit-Remaining"]).toBe("3"); // per key
  });

  it("the cost budget's two forms spend from one store", async () => {
    const budget = createCostBudget({ points: 100, durationSec: 60 });
    expect(budget.now!("k", 30)).toMatchObject({ refused: false, report: { requested: 30, remaining: 70 } });
    expect(await budget("k", 30)).toMatchObject({ refused: false, report: { remaining: 40 } });
    expect(budget.now!("k", 50)).toMatchObject({ refused: true, report: { requested: 50, remaining: 0 } });
  });

  it("a Redis-backed limit has no synchronous form (the fast path awaits the shared store)", () => {
    const redis = {} as NonNullable<Parameters<typeof createLimiter>[0]>["redis"];
    expect(createLimiter({ points: 4, durationSec: 60, redis })!.now).toBeUndefined();
  });
});
