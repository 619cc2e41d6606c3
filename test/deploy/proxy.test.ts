// The proxy of compose.yaml for real: Debian's nginx running deploy/nginx.conf (test/deploy/replicas.ts)
// in front of two API processes on one fresh PostgreSQL catalog. Reads are spread over both; a
// GraphQL write through the proxy is read back through it from the other replica; the service's
// headers pass unchanged; a killed replica costs no read; with TRUST_PROXY=1 (as compose.yaml runs
// it) the failed-auth throttle counts each client's address as nginx saw it, never one a client
// claims in X-Forwarded-For (nginx overwrites it). Skips, saying so, without nginx.
import { mkdtempSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeTinySource } from "../fixtures/tiny-source.ts";
import { dropDatabases, freshDatabase } from "../store/catalog/pg-fixture.ts";
import { freePort, NGINX, type NginxProxy, type Proc, startApi, startProxy } from "./replicas.ts";

if (!NGINX) console.warn("deploy proxy tests skipped: nginx is not installed (apt-get install nginx)");

const KEY = "deploy-proxy-demo-key-0123456789";

describe.skipIf(!NGINX)("nginx (deploy/nginx.conf) in front of two API replicas on PostgreSQL", () => {
  const ports: number[] = [];
  const apis: Proc[] = [];
  let proxy: NginxProxy;

  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${proxy.url}${path}`, { headers: { api_key: KEY, ...headers }, signal: AbortSignal.timeout(10_000) });
  /** The upstream port that answered the request with this X-Request-Id (nginx's access line). */
  const servedBy = async (requestId: string | null) => {
    for (let i = 0; i < 50; i++) {
      const line = proxy.lines().find((l) => l.request_id === requestId);
      if (line) return line.upstream;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`no access line for request ${requestId}`);
  };
  const upstream = (i: number) => `127.0.0.1:${ports[i]}`;
  /** GET /data/v1/benchmarks through the proxy from the local address `local` (a client of its own). */
  const from = (local: string, headers: Record<string, string>) =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.get(`${proxy.url}/data/v1/benchmarks`, { localAddress: local, headers, agent: false }, (res) => {
        let body = "";
        res.on("data", (c) => {
          body += c;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on("error", reject);
      req.setTimeout(10_000, () => req.destroy(new Error("timed out")));
    });

  beforeAll(async () => {
    const databaseUrl = await freshDatabase();
    const dataDir = mkdtempSync(join(tmpdir(), "deploy-store-"));
    const sourceDir = writeTinySource();
    for (let i = 0; i < 2; i++) {
      ports.push(await freePort());
      // One after the other: the first publishes the source, the second finds it published.
      const env = { TRUST_PROXY: "1" }; // compose.yaml's
      apis.push(await startApi({ port: ports[i], dataDir, databaseUrl, sourceDir, demoKey: KEY, env }));
    }
    proxy = await startProxy(ports);
  }, 240_000);

  afterAll(async () => {
    await proxy?.stop();
    for (const a of apis) await a.stop();
    await dropDatabases();
  });

  it("spreads reads over both replicas; the service's headers pass unchanged, ETags answer 304", async () => {
    const served: string[] = [];
    const etags = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const r = await get("/data/v1/stock_ratings?limit=2");
      expect(r.status).toBe(200);
      expect(r.headers.get("x-content-type-options")).toBe("nosniff");
      expect(r.headers.get("content-security-policy")).toContain("default-src");
      expect(r.headers.get("x-ratelimit-limit")).toBe("6000");
      expect(r.headers.get("server")).toBe("nginx"); // server_tokens off: no version
      etags.add(r.headers.get("etag") ?? "");
      await r.arrayBuffer();
      served.push(await servedBy(r.headers.get("x-request-id")));
    }
    // Round robin: each replica answered half.
    expect(served.filter((s) => s === upstream(0))).toHaveLength(10);
    expect(served.filter((s) => s === upstream(1))).toHaveLength(10);
    // Both replicas serve one snapshot, so one tag; each answers it with 304.
    expect([...etags]).toHaveLength(1);
    const [etag] = etags;
    expect(etag).toMatch(/^W\/"/);
    const not: string[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await get("/data/v1/stock_ratings?limit=2", { "if-none-match": etag });
      expect(r.status).toBe(304);
      not.push(await servedBy(r.headers.get("x-request-id")));
    }
    expect(new Set(not)).toEqual(new Set([upstream(0), upstream(1)]));
  });

  it("a GraphQL write through the proxy is read back through it from the other replica", async () => {
    const r = await fetch(`${proxy.url}/graphiql`, {
      method: "POST",
      headers: { api_key: KEY, "content-type": "application/json" },
      body: JSON.stringify({
        query: "mutation($i: CreateWatchlistInput!) { createWatchlist(input: $i) { success watchlist { id name } } }",
        variables: { i: { name: "Through the proxy", stockTickers: ["AAA", "BBB"] } },
      }),
    });
    const body = await r.json();
    expect(body.data.createWatchlist).toMatchObject({ success: true, watchlist: { name: "Through the proxy" } });
    const wrote = await servedBy(r.headers.get("x-request-id"));
    const id = body.data.createWatchlist.watchlist.id;
    // The next read goes to the other replica (round robin); it sees the write once NOTIFY reached it.
    const deadline = Date.now() + 5_000;
    for (;;) {
      const w = await get(`/data/v1/watchlists/${id}`);
      const json = await w.json();
      const by = await servedBy(w.headers.get("x-request-id"));
      if (by !== wrote && w.status === 200) {
        expect(json).toMatchObject({ id, name: "Through the proxy" });
        break;
      }
      if (Date.now() > deadline) throw new Error(`the other replica did not read watchlist ${id}: ${w.status}`);
    }
  });

  it("a killed replica costs no read: nginx retries the other one", async () => {
    apis[1].child.kill("SIGKILL");
    await new Promise((r) => apis[1].child.once("exit", r));
    const before = proxy.lines().length;
    for (let i = 0; i < 10; i++) {
      const r = await get("/data/v1/stock_ratings?limit=2");
      expect(r.status).toBe(200);
      expect(await servedBy(r.headers.get("x-request-id"))).toMatch(new RegExp(`${upstream(0)}$`));
    }
    const lines = proxy.lines().slice(before);
    // nginx tries the dead replica once (the first request, or none when its turn had passed), then
    // leaves it out for 10 s (the state is shared by nginx's workers); that request went on ("dead, live").
    const retried = lines.filter((l) => l.upstream.includes(upstream(1)));
    expect(retried.length).toBeLessThanOrEqual(1);
    for (const l of retried) expect(l.upstream).toBe(`${upstream(1)}, ${upstream(0)}`);
  });

  it("one client's 21 bad keys lock out that client alone; the X-Forwarded-For it sends is not believed", async () => {
    // Two clients on two loopback addresses. The replica left counts failures per client address,
    // the one nginx writes in X-Forwarded-For ($remote_addr, replacing what a client sent): each
    // guess below claims another address, yet all count as 127.0.0.2's. 20 are allowed, the 21st
    // blocks 127.0.0.2, whose right key is refused next; 127.0.0.1's is not.
    for (let i = 0; i < 21; i++) {
      const r = await from("127.0.0.2", { api_key: `wrong-key-${i}`, "x-forwarded-for": `203.0.113.${i}` });
      expect(r.status).toBe(i < 20 ? 401 : 429);
    }
    const blocked = await from("127.0.0.2", { api_key: KEY, "x-forwarded-for": "127.0.0.1" });
    expect(blocked.status).toBe(429);
    expect(JSON.parse(blocked.body).error.message).toMatch(/too many failed authentications from this address/);
    // the other client, even claiming the blocked address, is served
    expect((await from("127.0.0.1", { api_key: KEY, "x-forwarded-for": "127.0.0.2" })).status).toBe(200);
    expect((await get("/data/v1/benchmarks")).status).toBe(200);
  });
});
