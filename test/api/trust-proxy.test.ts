// TRUST_PROXY on a real server: the failed-authentication count and the access log take the
// client's address from X-Forwarded-For `hops` back (api/client-address.ts), so behind a proxy one
// client's guesses lock out that client alone. With 0 the header is ignored: every request from
// this socket is one client. Both serving paths, REST and GraphQL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../jobs/config.ts";
import { AUTH_FAILURES_PER_MINUTE } from "../../jobs/host/serve.ts";
import { KEYS } from "./fixture.ts";
import { FAST_HEADER, prime, rawGet, SERVING_PATHS, startTestServer, type TestServer } from "./helpers.ts";

const A = "198.51.100.7";
const B = "203.0.113.9";
const guess = (srv: TestServer, i: number, from: string) =>
  rawGet(srv.url, "/data/v1/stock_ratings", {
    api_key: `srk_guess_${i}_0000000000000000000000`,
    "x-forwarded-for": from,
  });
const gql = (srv: TestServer, key: string, from: string) =>
  fetch(`${srv.url}/graphiql`, {
    method: "POST",
    headers: { "content-type": "application/json", api_key: key, "x-forwarded-for": from },
    body: JSON.stringify({ query: "{ __typename }" }),
  });

let base: TestServer;
beforeAll(async () => {
  base = await startTestServer();
});
afterAll(() => base?.close());

describe("TRUST_PROXY", () => {
  it("is a whole number of hops, 0 when unset; anything else is refused by name", () => {
    expect(loadConfig({}).trustProxy).toBe(0);
    expect(loadConfig({ TRUST_PROXY: "" }).trustProxy).toBe(0);
    expect(loadConfig({ TRUST_PROXY: "2" }).trustProxy).toBe(2);
    expect(() => loadConfig({ TRUST_PROXY: "yes" })).toThrow('TRUST_PROXY: must be a whole number (got "yes")');
    expect(() => loadConfig({ TRUST_PROXY: "1.5" })).toThrow('TRUST_PROXY: must be a whole number (got "1.5")');
    expect(() => loadConfig({ TRUST_PROXY: "-1" })).toThrow('TRUST_PROXY: must be at least 0 (got "-1")');
  });
});

describe.each(SERVING_PATHS)("failed authentications behind a proxy ($name)", (sp) => {
  const start = (env: Record<string, string>) =>
    startTestServer({
      fx: base.fx,
      deps: {
        ...sp.deps,
        authFailureLimit: { points: AUTH_FAILURES_PER_MINUTE, durationSec: 60 },
        trustProxy: loadConfig(env).trustProxy,
      },
    });
  const cached = `/data/v1/stock_ratings?api_key=${KEYS.alice}&limit=1`;

  it(`TRUST_PROXY=1: ${AUTH_FAILURES_PER_MINUTE + 1} bad keys from address A lock out A, not B`, async () => {
    const srv = await start({ TRUST_PROXY: "1" });
    try {
      await prime(srv, sp, cached, { "x-forwarded-for": B });
      for (let i = 0; i < AUTH_FAILURES_PER_MINUTE; i++) expect((await guess(srv, i, A)).status).toBe(401);
      // a spoofed entry to the left of the proxy's is not read: still A's count
      const over = await guess(srv, AUTH_FAILURES_PER_MINUTE, `${B}, ${A}`);
      expect(over.status).toBe(429);
      // A is refused even with the valid key, on both transports
      expect((await rawGet(srv.url, cached, { "x-forwarded-for": A })).status).toBe(429);
      expect((await gql(srv, KEYS.alice, A)).status).toBe(429);
      // B is not: its read is served (from the cache on the fast path), and a guess of B's is a 401
      const b = await rawGet(srv.url, cached, { "x-forwarded-for": `${A}, ${B}` });
      expect(b.status).toBe(200);
      expect(b.headers.get(FAST_HEADER) === "hit").toBe(sp.fast);
      expect((await gql(srv, KEYS.alice, B)).status).toBe(200);
      expect((await guess(srv, 0, B)).status).toBe(401);
      // the access log names each client by its forwarded address
      await new Promise((r) => setImmediate(r));
      const addresses = srv.logs
        .filter((l) => l.includes('"remoteAddress"'))
        .map((l) => JSON.parse(l).req.remoteAddress);
      expect(new Set(addresses)).toEqual(new Set([A, B]));
    } finally {
      await srv.close();
    }
  });

  it("TRUST_PROXY unset (0): X-Forwarded-For is ignored, every request from this socket counts together", async () => {
    const srv = await start({});
    try {
      await prime(srv, sp, cached, { "x-forwarded-for": B });
      for (let i = 0; i < AUTH_FAILURES_PER_MINUTE; i++) expect((await guess(srv, i, `192.0.2.${i}`)).status).toBe(401);
      expect((await guess(srv, AUTH_FAILURES_PER_MINUTE, A)).status).toBe(429);
      const b = await rawGet(srv.url, cached, { "x-forwarded-for": B });
      expect(b.status).toBe(429);
      expect(b.headers.get(FAST_HEADER)).toBeNull();
      await new Promise((r) => setImmediate(r));
      const addresses = srv.logs
        .filter((l) => l.includes('"remoteAddress"'))
        .map((l) => JSON.parse(l).req.remoteAddress);
      expect(new Set(addresses)).toEqual(new Set(["127.0.0.1"]));
    } finally {
      await srv.close();
    }
  });
});
