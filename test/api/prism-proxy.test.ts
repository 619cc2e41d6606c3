// Prism (Stoplight's validating proxy, draft-07 rules unless told otherwise) between a client and the
// server, over a request set built from the OpenAPI document itself: every path, valid (JSON, CSV,
// Arrow) and refused (a bad value, no key, an unknown id). Zero response violations (issue #40.2).
// Prism is no dependency of the project: .ci/run installs it into a cache and sets PRISM_BIN; without
// it this test skips and says so.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEYS } from "./fixture.ts";
import { startTestServer, type TestServer } from "./helpers.ts";

// biome-ignore lint/suspicious/noExplicitAny: the OpenAPI document, walked generically
type J = any;

const PRISM = process.env.PRISM_BIN;
if (!PRISM) console.warn("prism-proxy.test.ts: PRISM_BIN is not set (.ci/run sets it): skipped");

let s: TestServer;
let prism: ChildProcess | undefined;
let proxy = "";
let doc: J;

const freePort = () =>
  new Promise<number>((resolve) => {
    const l = createServer().listen(0, "127.0.0.1", () => {
      const { port } = l.address() as { port: number };
      l.close(() => resolve(port));
    });
  });

beforeAll(async () => {
  if (!PRISM) return;
  s = await startTestServer();
  doc = (await s.get("/data/v1/openapi.json")).json;
  const file = join(mkdtempSync(join(tmpdir(), "prism-")), "openapi.json");
  writeFileSync(file, JSON.stringify(doc));
  const port = await freePort();
  prism = spawn(PRISM, ["proxy", file, s.url, "--errors=false", "-p", String(port), "-h", "127.0.0.1"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  proxy = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    const up = await fetch(`${proxy}/data/v1/benchmarks?api_key=${KEYS.alice}`).catch(() => null);
    if (up) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("prism did not start within 30 s");
}, 60_000);
afterAll(async () => {
  prism?.kill();
  await s?.close();
});

/** Each operation's requests: valid in every format it offers, then refused ones. */
function requestSet(): string[] {
  const out: string[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, J>)) {
    const op = item.get;
    let target = path;
    for (const p of op.parameters.filter((x: J) => x.in === "path"))
      target = target.replace(`{${p.name}}`, encodeURIComponent(p.example));
    const names = new Set(op.parameters.map((p: J) => p.name));
    const base = `${target}?api_key=${KEYS.alice}${names.has("value") ? "&value=100000" : ""}`;
    out.push(base);
    const formats: string[] = op.parameters.find((p: J) => p.name === "format")?.schema.enum ?? [];
    for (const f of formats) out.push(`${base}&format=${f}`);
    out.push(target); // no key: 401
    out.push(`${base}&no_such_param=1`); // 400 naming it
    if (names.has("limit")) out.push(`${base}&limit=0`);
    if (target !== path || path.includes("{"))
      out.push(`${target.replace(/\/[^/]+$/, "/NOPE_404")}?api_key=${KEYS.alice}`);
  }
  return out;
}

describe.skipIf(!PRISM)("Prism's validating proxy", () => {
  it("finds no response violation over every path's valid and refused requests", async () => {
    const found: string[] = [];
    const statuses = new Set<number>();
    const targets = requestSet();
    for (const t of targets) {
      const r = await fetch(`${proxy}${t}`);
      statuses.add(r.status);
      await r.arrayBuffer();
      const v = r.headers.get("sl-violations");
      const list = v ? (JSON.parse(v) as { location: string[]; message: string }[]) : [];
      for (const x of list) if (x.location[0] === "response") found.push(`${t}: ${x.location.join(".")} ${x.message}`);
    }
    expect(targets.length).toBeGreaterThan(4 * Object.keys(doc.paths).length);
    expect([...statuses].sort()).toEqual(expect.arrayContaining([200, 400, 401, 404]));
    expect(found).toEqual([]);
  }, 120_000);
});
