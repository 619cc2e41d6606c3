// Abuse at the HTTP edge: key guessing is throttled per client address, numbers are decimal only,
// and an oversized request head gets the contract's JSON error instead of Node's empty 431.
import { createHash } from "node:crypto";
import net from "node:net";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redisBlockBroadcast } from "../../jobs/host/redis-health.ts";
import { noRedis } from "../redis.ts";
import { KEYS } from "./fixture.ts";
import { FAST_HEADER, prime, rawGet, SERVING_PATHS, startTestServer, type TestServer } from "./helpers.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s?.close());

const guess = (srv: TestServer, i: number) =>
  srv.get("/data/v1/stock_ratings", { api_key: `srk_guess_${i}_0000000000000000000000` });

// On the fast path the valid key's answers are cached before the guessing starts: a blocked
// address must be refused even where the cache holds the answer.
describe.each(SERVING_PATHS)("failed authentications per client address ($name)", (sp) => {
  it("after the limit, 429 with the contract body and Retry-After, for any key from that address", async () => {
    const deps = { ...sp.deps, authFailureLimit: { points: 5, durationSec: 60 } };
    const srv = await startTestServer({ fx: s.fx, deps });
    try {
      const cached = `/data/v1/stock_ratings?api_key=${KEYS.alice}&limit=1`;
      await prime(srv, sp, cached);
      await prime(srv, sp, "/data/v1/stock_ratings", { api_key: KEYS.bob });
      for (let i = 0; i < 5; i++) expect((await guess(srv, i)).status).toBe(401);
      const refused = await guess(srv, 5);
      expect(refused.status).toBe(429);
      expect(refused.json).toEqual({
        error: {
          status: 429,
          code: "rate_limited",
          message: expect.stringMatching(/too many failed authentications/),
          details: [],
        },
      });
      const retry = Number(refused.headers.get("retry-after"));
      expect(retry).toBeGreaterThan(0);
      expect(retry).toBeLessThanOrEqual(60);
      // a valid key from the blocked address is refused too: otherwise a guess that succeeds
      // would still be told apart from the refused ones
      const blocked = await rawGet(srv.url, cached);
      expect(blocked.status).toBe(429);
      expect(blocked.headers.get(FAST_HEADER)).toBeNull();
      expect((await rawGet(srv.url, "/data/v1/stock_ratings", { api_key: KEYS.bob })).status).toBe(429);
      // no key at all counts as a failure as well
      expect((await srv.get("/data/v1/benchmarks")).status).toBe(429);
    } finally {
      await srv.close();
    }
  });

  it("successful requests do not count", async () => {
    const deps = { ...sp.deps, authFailureLimit: { points: 3, durationSec: 60 } };
    const srv = await startTestServer({ fx: s.fx, deps });
    try {
      let hits = 0;
      for (let i = 0; i < 20; i++) {
        const r = await srv.api("benchmarks");
        expect(r.status).toBe(200);
        if (r.headers.get(FAST_HEADER) === "hit") hits++;
      }
      expect(hits > 0).toBe(sp.fast);
      expect((await guess(srv, 0)).status).toBe(401);
    } finally {
      await srv.close();
    }
  });
});

describe("failed authentications per client address", () => {
  it.skipIf(noRedis)("two servers sharing Redis share the count", async () => {
    const redisUrl = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
    const a = new Redis(redisUrl);
    const b = new Redis(redisUrl);
    // Until a client is connected the limiters count in memory (rejectIfRedisNotReady).
    await Promise.all([a.ping(), b.ping()]);
    const prefix = `test-authfail-${process.pid}-${Date.now()}`;
    const [ba, bb] = [redisBlockBroadcast(a, `${prefix}:blocked`), redisBlockBroadcast(b, `${prefix}:blocked`)];
    const one = await startTestServer({
      fx: s.fx,
      deps: { authFailureLimit: { points: 4, durationSec: 60, redis: a, prefix, broadcast: ba } },
    });
    const two = await startTestServer({
      fx: s.fx,
      deps: { authFailureLimit: { points: 4, durationSec: 60, redis: b, prefix, broadcast: bb } },
    });
    await new Promise((r) => setTimeout(r, 200)); // both subscriptions in place
    try {
      expect((await guess(one, 1)).status).toBe(401);
      expect((await guess(two, 2)).status).toBe(401);
      expect((await guess(one, 3)).status).toBe(401);
      expect((await guess(two, 4)).status).toBe(401);
      expect((await guess(one, 5)).status).toBe(429);
      // `two` never saw a failure over the count, yet refuses the address even with a valid key:
      // `one` said so through Redis (a right guess must not be told apart on another server).
      for (let i = 0; i < 20 && (await two.api("benchmarks")).status !== 429; i++)
        await new Promise((r) => setTimeout(r, 100));
      expect((await two.api("benchmarks")).status).toBe(429);
      expect((await guess(two, 6)).status).toBe(429);
    } finally {
      ba.close();
      bb.close();
      await Promise.all([one.close(), two.close()]);
      const keys = await a.keys(`${prefix}*`);
      if (keys.length) await a.del(...keys);
      a.disconnect();
      b.disconnect();
    }
  });

  it("without the option nothing is throttled (as before)", async () => {
    for (let i = 0; i < 30; i++) expect((await guess(s, i)).status).toBe(401);
  });
});

describe("numbers are decimal only", () => {
  const t = () => s.fx.snapshot.companies[0].ticker;
  const cases: [string, Record<string, string>, string][] = [
    ["stock_ratings", { limit: "0x10" }, "limit"],
    ["stock_ratings", { limit: "0o7" }, "limit"],
    ["stock_ratings", { limit: " 5" }, "limit"],
    ["stock_ratings", { limit: "" }, "limit"],
    ["stock_ratings", { offset: "0b1" }, "offset"],
    ["stock_ratings", { offset: "0x0" }, "offset"],
    ["portfolio_trades/101", { value: "0x10" }, "value"],
    ["portfolio_trades/101", { value: "Infinity" }, "value"],
    ["STOCK_METRICS", { period: "0x1" }, "period"],
    ["STOCK_METRICS", { period: "1_0" }, "period"],
  ];
  it("hexadecimal, binary, octal, padded or empty forms are a 400 naming the parameter", async () => {
    for (const [path, params, param] of cases) {
      const p = path === "STOCK_METRICS" ? `stock_metrics/${t()}` : path;
      const r = await s.api(p, params);
      expect(r.status, `${p} ${JSON.stringify(params)}`).toBe(400);
      expect(r.json.error.code).toBe("invalid_parameter");
      expect(r.json.error.details.map((d: { param: string }) => d.param)).toEqual([param]);
    }
  });

  it("decimal forms still work", async () => {
    expect((await s.api("stock_ratings", { limit: "10" })).json).toHaveLength(10);
    expect((await s.api("stock_ratings", { limit: "1e1" })).json).toHaveLength(10);
    expect((await s.api("stock_ratings", { limit: "+3", offset: "2" })).json).toHaveLength(3);
    expect((await s.api("portfolio_trades/101", { value: "1e6" })).status).toBe(200);
    expect((await s.api(`stock_metrics/${t()}`, { period: "0.5" })).status).toBe(200);
    expect((await s.api(`stock_metrics/${t()}`, { period: ".5" })).status).toBe(200);
  });
});

/** Sends one raw request head and reads the whole answer (the server closes the connection). */
function rawExchange(url: string, head: string): Promise<string> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const sock = net.connect(Number(u.port), u.hostname, () => sock.write(head));
    let out = "";
    sock.on("data", (d) => (out += d));
    sock.on("end", () => resolve(out));
    sock.on("close", () => resolve(out));
    sock.on("error", reject);
    setTimeout(() => {
      sock.destroy();
      resolve(out);
    }, 5000).unref();
  });
}

describe("oversized request heads", () => {
  it("> 16 KB of headers: 431 with the contract's JSON error body", async () => {
    const answer = await rawExchange(
      s.url,
      `GET /data/v1/stock_ratings?api_key=${KEYS.alice} HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`,
    );
    const [head, body] = answer.split("\r\n\r\n");
    expect(head).toMatch(/^HTTP\/1\.1 431 /);
    expect(head.toLowerCase()).toContain("content-type: application/json; charset=utf-8");
    expect(head.toLowerCase()).toContain("connection: close");
    expect(JSON.parse(body)).toEqual({
      error: { status: 431, code: "headers_too_large", message: "the request's headers exceed 16 KB", details: [] },
    });
  });

  it("a malformed request line: 400 with the JSON error body", async () => {
    const answer = await rawExchange(s.url, "GET /\x01 nonsense\r\n\r\n");
    const [head, body] = answer.split("\r\n\r\n");
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    expect(JSON.parse(body).error).toMatchObject({ status: 400, code: "bad_request" });
  });

  it("the server keeps serving afterwards", async () => {
    expect((await s.api("benchmarks")).status).toBe(200);
  });
});

describe("failed authentications through GraphQL", () => {
  it("count with REST's against the same address: 401 with a GraphQL errors body, then 429", async () => {
    const srv = await startTestServer({ fx: s.fx, deps: { authFailureLimit: { points: 3, durationSec: 60 } } });
    const post = (key: string) =>
      fetch(`${srv.url}/graphiql`, {
        method: "POST",
        headers: { "content-type": "application/json", api_key: key },
        body: JSON.stringify({ query: "{ __typename }" }),
      });
    // a persisted query answered from the cache before the guessing starts
    const q = "{ benchmarks { id } }";
    const ext = { persistedQuery: { version: 1, sha256Hash: createHash("sha256").update(q).digest("hex") } };
    const apq = `/graphiql?extensions=${encodeURIComponent(JSON.stringify(ext))}`;
    try {
      await fetch(`${srv.url}/graphiql`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json", api_key: KEYS.alice },
        body: JSON.stringify({ query: q, extensions: ext }),
      });
      const hit = await rawGet(srv.url, apq, { api_key: KEYS.alice, accept: "application/json" });
      expect(hit.headers.get(FAST_HEADER)).toBe("hit");
      expect((await guess(srv, 0)).status).toBe(401); // REST failure 1
      const first = await post("srk_guess_gql_1_00000000000000000000");
      expect(first.status).toBe(401);
      expect(((await first.json()) as { errors: unknown[] }).errors).toHaveLength(1);
      expect((await post("srk_guess_gql_2_00000000000000000000")).status).toBe(401); // failure 3
      const refused = await post("srk_guess_gql_3_00000000000000000000");
      expect(refused.status).toBe(429);
      expect(JSON.stringify(await refused.json())).toMatch(/too many failed authentications/);
      // the valid key from the blocked address is refused on both transports, from the cache too
      expect((await post(KEYS.alice)).status).toBe(429);
      expect((await rawGet(srv.url, apq, { api_key: KEYS.alice, accept: "application/json" })).status).toBe(429);
      expect((await srv.api("benchmarks")).status).toBe(429);
    } finally {
      await srv.close();
    }
  });
});
