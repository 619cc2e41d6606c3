// HTTP conventions: compression of large bodies (br, gzip), security headers, configurable CORS,
// the OpenAPI document's servers and lint, and the offline API reference at /docs.
import { execFile } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import http from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../jobs/config.ts";
import { KEYS } from "./fixture.ts";
import { FAST_HEADER, prime, SERVING_PATHS, startTestServer, type TestServer } from "./helpers.ts";

const ROOT = resolve(import.meta.dirname, "../..");

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s?.close());

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}
/** A request with no automatic decompression (fetch would undo Content-Encoding). */
function request(base: string, path: string, headers: Record<string, string> = {}, method = "GET"): Promise<Raw> {
  const u = new URL(base);
  return new Promise((res, rej) => {
    const req = http.request({ host: u.hostname, port: u.port, path, headers, method }, (r) => {
      const chunks: Buffer[] = [];
      r.on("data", (c: Buffer) => chunks.push(c));
      r.on("end", () => res({ status: r.statusCode ?? 0, headers: r.headers, body: Buffer.concat(chunks) }));
    });
    req.on("error", rej);
    req.end();
  });
}
const key = `api_key=${KEYS.alice}`;

describe("compression", () => {
  const big = () => `/data/v1/stock_performance/${s.fx.snapshot.companies[0].ticker}?${key}`;

  it("a large body is sent brotli- or gzip-encoded when accepted, and decodes to the same bytes", async () => {
    const plain = await request(s.url, big());
    expect(plain.status).toBe(200);
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(plain.body.length).toBeGreaterThan(4096);

    const br = await request(s.url, big(), { "Accept-Encoding": "gzip, deflate, br" });
    expect(br.headers["content-encoding"]).toBe("br");
    expect(br.headers.vary).toMatch(/Accept-Encoding/);
    expect(Number(br.headers["content-length"])).toBe(br.body.length);
    expect(br.body.length).toBeLessThan(plain.body.length / 2);
    expect(brotliDecompressSync(br.body).equals(plain.body)).toBe(true);
    expect(br.headers.etag).toBe(plain.headers.etag);

    const gz = await request(s.url, big(), { "Accept-Encoding": "gzip" });
    expect(gz.headers["content-encoding"]).toBe("gzip");
    expect(gunzipSync(gz.body).equals(plain.body)).toBe(true);

    const csv = await request(s.url, `${big()}&format=csv`, { "Accept-Encoding": "gzip" });
    expect(csv.headers["content-encoding"]).toBe("gzip");
    expect(gunzipSync(csv.body).toString()).toMatch(/^name,date,return\r\n/);

    // a catalog-backed body (built per request) is compressed too once it is large enough
    const nm = await request(s.url, big(), { "Accept-Encoding": "br", "If-None-Match": String(br.headers.etag) });
    expect(nm.status).toBe(304);
  });

  it("a small body is sent as it is", async () => {
    const small = await request(s.url, `/data/v1/benchmarks?${key}`, { "Accept-Encoding": "gzip, br" });
    expect(small.status).toBe(200);
    expect(small.body.length).toBeLessThan(1024);
    expect(small.headers["content-encoding"]).toBeUndefined();
  });

  it("identity;q=0 style refusals and unknown codings fall back correctly", async () => {
    const none = await request(s.url, big(), { "Accept-Encoding": "br;q=0, gzip;q=0" });
    expect(none.headers["content-encoding"]).toBeUndefined();
    const other = await request(s.url, big(), { "Accept-Encoding": "zstd-unknown" });
    expect(other.headers["content-encoding"]).toBeUndefined();
  });

  it("the OpenAPI document is compressed as well", async () => {
    const doc = await request(s.url, "/data/v1/openapi.json", { "Accept-Encoding": "gzip" });
    expect(doc.headers["content-encoding"]).toBe("gzip");
    expect(JSON.parse(gunzipSync(doc.body).toString()).openapi).toBe("3.1.0");
  });
});

describe.each(SERVING_PATHS)("security headers (helmet), $name", (sp) => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ deps: sp.deps });
  });
  afterAll(() => s?.close());

  it("every kind of response carries them", async () => {
    // the cached answers: on the fast path these come from the cache (304 included)
    const ok = await prime(s, sp, `/data/v1/benchmarks?${key}`);
    await prime(s, sp, `/data/v1/benchmarks?${key}&format=csv`);
    const etag = ok.headers.get("etag")!;
    const notModified = await request(s.url, `/data/v1/benchmarks?${key}`, { "if-none-match": etag });
    expect(notModified.status).toBe(304);
    expect(notModified.headers[FAST_HEADER]).toBe(sp.fast ? "hit" : undefined);
    expect(notModified.headers["content-security-policy"]).toMatch(/default-src 'self'/);
    for (const path of [
      `/data/v1/benchmarks?${key}`,
      `/data/v1/benchmarks?${key}&format=csv`,
      "/data/v1/benchmarks",
      "/healthz",
      "/data/v1/openapi.json",
      "/nowhere",
      "/docs/",
    ]) {
      const r = await request(s.url, path);
      if (path.startsWith(`/data/v1/benchmarks?${key}`))
        expect(r.headers[FAST_HEADER]).toBe(sp.fast ? "hit" : undefined);
      expect(r.headers["x-content-type-options"], path).toBe("nosniff");
      expect(r.headers["x-frame-options"], path).toBe("SAMEORIGIN");
      expect(r.headers["strict-transport-security"], path).toMatch(/max-age=\d+/);
      expect(r.headers["referrer-policy"], path).toBe("no-referrer");
      expect(r.headers["content-security-policy"], path).toMatch(/default-src 'self'/);
      expect(r.headers["x-powered-by"], path).toBeUndefined();
    }
  });
});

describe.each(SERVING_PATHS)("CORS, $name", (sp) => {
  it("off by default: no Access-Control-Allow-Origin", async () => {
    const srv = await startTestServer({ fx: s.fx, deps: sp.deps });
    try {
      await prime(srv, sp, `/data/v1/benchmarks?${key}`);
      const r = await request(srv.url, `/data/v1/benchmarks?${key}`, { Origin: "https://app.example" });
      expect(r.headers[FAST_HEADER]).toBe(sp.fast ? "hit" : undefined);
      expect(r.headers["access-control-allow-origin"]).toBeUndefined();
    } finally {
      await srv.close();
    }
  });

  it("with configured origins: those origins only, preflight included", async () => {
    const srv = await startTestServer({ fx: s.fx, deps: { ...sp.deps, cors: ["https://app.example"] } });
    try {
      await prime(srv, sp, `/data/v1/benchmarks?${key}`);
      const ok = await request(srv.url, `/data/v1/benchmarks?${key}`, { Origin: "https://app.example" });
      expect(ok.headers[FAST_HEADER]).toBe(sp.fast ? "hit" : undefined);
      expect(ok.status).toBe(200);
      expect(ok.headers["access-control-allow-origin"]).toBe("https://app.example");
      expect(ok.headers["access-control-expose-headers"]).toMatch(/ETag/);
      expect(ok.headers["access-control-expose-headers"]).toMatch(/Retry-After/);
      expect(ok.headers.vary).toMatch(/Origin/);
      const err = await request(srv.url, "/data/v1/benchmarks", { Origin: "https://app.example" });
      expect(err.status).toBe(401);
      expect(err.headers["access-control-allow-origin"]).toBe("https://app.example");
      const other = await request(srv.url, `/data/v1/benchmarks?${key}`, { Origin: "https://evil.example" });
      expect(other.headers["access-control-allow-origin"]).toBeUndefined();
      const pre = await request(
        srv.url,
        "/data/v1/stock_ratings",
        {
          Origin: "https://app.example",
          "Access-Control-Request-Method": "GET",
          "Access-Control-Request-Headers": "api_key",
        },
        "OPTIONS",
      );
      expect(pre.status).toBe(204);
      expect(pre.headers["access-control-allow-origin"]).toBe("https://app.example");
      expect(String(pre.headers["access-control-allow-headers"]).toLowerCase()).toContain("api_key");
      expect(String(pre.headers["access-control-allow-methods"])).toContain("GET");
    } finally {
      await srv.close();
    }
  });
});

describe("CORS configuration", () => {
  it("CORS_ORIGINS is validated at start", () => {
    expect(loadConfig({ CORS_ORIGINS: "https://a.example, http://b.example:8080" }).corsOrigins).toEqual([
      "https://a.example",
      "http://b.example:8080",
    ]);
    expect(loadConfig({ CORS_ORIGINS: "*" }).corsOrigins).toBe("*");
    expect(loadConfig({}).corsOrigins).toBeNull();
    expect(() => loadConfig({ CORS_ORIGINS: "app.example" })).toThrow(ConfigError);
    expect(() => loadConfig({ CORS_ORIGINS: "https://a.example/path" })).toThrow(/CORS_ORIGINS/);
  });
});

describe("OpenAPI document", () => {
  it("names its servers", async () => {
    const doc = (await s.get("/data/v1/openapi.json")).json;
    expect(doc.servers).toEqual([{ url: "/", description: "this server" }]);
  });

  it("passes redocly lint", async () => {
    const doc = (await s.get("/data/v1/openapi.json")).text;
    const dir = mkdtempSync(join(tmpdir(), "openapi-"));
    const file = join(dir, "openapi.json");
    writeFileSync(file, doc);
    const run = promisify(execFile);
    const out = await run(join(ROOT, "node_modules/.bin/redocly"), ["lint", file, "--format", "json"], {
      cwd: ROOT,
      env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
    }).catch((e: { stdout: string; stderr: string }) => e);
    const report = JSON.parse(out.stdout);
    const problems = report.problems.map(
      (p: { ruleId: string; message: string; severity: string }) => `${p.severity} ${p.ruleId}: ${p.message}`,
    );
    expect(problems).toEqual([]);
  }, 120_000);
});

describe("/docs", () => {
  it("serves a page that loads Redoc from this server and the OpenAPI document", async () => {
    for (const path of ["/docs", "/docs/"]) {
      const r = await request(s.url, path);
      expect(r.status, path).toBe(200);
      expect(r.headers["content-type"]).toBe("text/html; charset=utf-8");
      const html = r.body.toString();
      expect(html).toContain('spec-url="/data/v1/openapi.json"');
      expect(html).toContain('src="/docs/redoc.standalone.js"');
      expect(html).not.toMatch(/https?:\/\//); // nothing from elsewhere: it works offline
    }
    const js = await request(s.url, "/docs/redoc.standalone.js", { "Accept-Encoding": "br" });
    expect(js.status).toBe(200);
    expect(js.headers["content-type"]).toMatch(/^(text|application)\/javascript/);
    expect(js.headers["content-encoding"]).toBe("br");
    expect(brotliDecompressSync(js.body).length).toBeGreaterThan(500_000);
    expect((await request(s.url, "/docs/../package.json")).status).toBe(404);
    expect((await request(s.url, "/docs/nothing.js")).status).toBe(404);
  });
});
