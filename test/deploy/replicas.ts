// API processes on one PostgreSQL catalog, and nginx running deploy/nginx.conf in front of them, on
// loopback ports: what compose.yaml runs, without containers. The config is used as it is but for
// its `listen` line (a free loopback port); the upstream.conf it includes is written here.
// Shared by test/deploy/proxy.test.ts and `npm run bench -- catalog`.
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const ROOT = join(import.meta.dirname, "../..");
export const NGINX = ["/usr/sbin/nginx", "/usr/bin/nginx"].find((p) => existsSync(p)) ?? null;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const a = s.address();
      s.close(() => (typeof a === "object" && a ? ok(a.port) : fail(new Error("no port"))));
    });
  });
}

export interface Proc {
  child: ChildProcess;
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

function track(child: ChildProcess): Proc {
  let out = "";
  child.stdout?.on("data", (b) => {
    out += b;
  });
  child.stderr?.on("data", (b) => {
    out += b;
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  return {
    child,
    output: () => out,
    async stop(signal = "SIGTERM") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await Promise.race([exited, sleep(15_000)]);
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    },
  };
}

/** Polls `url` until it answers 200; throws with `proc`'s output after `ms`. */
export async function until200(url: string, proc: Proc, ms = 120_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (proc.child.exitCode !== null) break;
    const r = await fetch(url, { signal: AbortSignal.timeout(2_000) }).catch(() => null);
    if (r?.status === 200) return;
    await sleep(200);
  }
  throw new Error(`${url} did not answer 200 within ${ms} ms; the process said:\n${proc.output().slice(-3000)}`);
}

export interface ApiOptions {
  port: number;
  dataDir: string;
  databaseUrl: string;
  sourceDir: string;
  demoKey: string;
  env?: Record<string, string>;
}

/** `npm start`'s entry on one port, its catalog on `databaseUrl`, without Redis; resolves once it serves. */
export async function startApi(o: ApiOptions): Promise<Proc> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of ["REDIS_URL", "WEB_CONCURRENCY", "NODE_OPTIONS", "VITEST", "VITEST_WORKER_ID"]) delete env[k];
  Object.assign(env, {
    PORT: String(o.port),
    DATA_DIR: o.dataDir,
    DATABASE_URL: o.databaseUrl,
    SOURCE_DIR: o.sourceDir,
    DEMO_API_KEY: o.demoKey,
    LOG_FORMAT: "json",
    WEBHOOKS: "0",
    ...o.env,
  });
  const child = spawn(process.execPath, ["--import", "tsx", "jobs/host/start.ts"], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const proc = track(child);
  await until200(`http://127.0.0.1:${o.port}/healthz`, proc);
  return proc;
}

export interface NginxProxy extends Proc {
  url: string;
  /** The access lines nginx wrote so far, parsed. */
  lines(): { uri: string; status: number; request_id: string; upstream: string }[];
}

/** nginx with deploy/nginx.conf listening on a free loopback port, its upstreams the given ports. */
export async function startProxy(upstreamPorts: number[]): Promise<NginxProxy> {
  if (!NGINX) throw new Error("nginx is not installed");
  const dir = mkdtempSync(join(tmpdir(), "deploy-nginx-"));
  const conf = readFileSync(join(ROOT, "deploy/nginx.conf"), "utf8");
  if (conf.split("listen 8080;").length !== 2) throw new Error("deploy/nginx.conf: expected one `listen 8080;`");
  const port = await freePort();
  writeFileSync(join(dir, "nginx.conf"), conf.replace("listen 8080;", `listen 127.0.0.1:${port};`));
  const upstream = upstreamPorts.map((p) => `server 127.0.0.1:${p} max_fails=1 fail_timeout=10s;\n`).join("");
  writeFileSync(join(dir, "upstream.conf"), upstream);
  // Main-context settings the file leaves to the image (pid, error log); root's workers stay root here.
  const main = `daemon off; pid ${dir}/nginx.pid; error_log ${dir}/error.log warn;`;
  const user = process.getuid?.() === 0 ? " user root;" : "";
  // stdout a file: nginx opens /dev/stdout by path, which a socket (node's pipes) refuses.
  const access = join(dir, "access.log");
  const fd = openSync(access, "a");
  const child = spawn(NGINX, ["-p", dir, "-c", join(dir, "nginx.conf"), "-g", main + user], {
    stdio: ["ignore", fd, "pipe"],
  });
  closeSync(fd);
  const proc = track(child);
  const url = `http://127.0.0.1:${port}`;
  await until200(`${url}/healthz`, proc, 20_000).catch((e) => {
    const log = existsSync(join(dir, "error.log")) ? readFileSync(join(dir, "error.log"), "utf8") : "";
    throw new Error(`${e.message}\n${log}`);
  });
  return {
    ...proc,
    url,
    lines: () =>
      readFileSync(access, "utf8")
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l)),
  };
}
