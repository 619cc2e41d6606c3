// The fuzz suite's real server (server-entry.ts in a child process), a monitor that probes
// /healthz and samples the server's RSS from a worker thread (so the suite's own work never
// delays a probe), and a request function that sends the target exactly as generated.
import { fork } from "node:child_process";
import http from "node:http";
import { join } from "node:path";
import { Worker } from "node:worker_threads";

export interface FuzzServer {
  url: string;
  key: string;
  pid: number;
  close(): Promise<void>;
}

export async function startFuzzServer(): Promise<FuzzServer> {
  const child = fork(join(import.meta.dirname, "server-entry.ts"), [], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const ready = await new Promise<{ url: string; key: string; pid: number }>((resolve, reject) => {
    child.once("message", (m) => resolve(m as { url: string; key: string; pid: number }));
    child.once("exit", (code) => reject(new Error(`fuzz server exited ${code} before serving`)));
  });
  return {
    ...ready,
    close: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.send("close");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export interface MonitorReport {
  probes: number;
  /** Probes that failed (no answer, non-200) or answered slower than the bound, with their time. */
  slow: { at: number; ms: number; status: number }[];
  maxProbeMs: number;
  rssStartKb: number;
  rssMaxKb: number;
}

// Runs in the worker: probe /healthz every intervalMs (one at a time, a fresh connection each, as
// an orchestrator's health check does) and read VmRSS from /proc; answer the report on "stop".
const MONITOR = `
const { parentPort, workerData } = require("node:worker_threads");
const http = require("node:http");
const fs = require("node:fs");
const { url, pid, intervalMs, boundMs } = workerData;
const rss = () => Number(/VmRSS:\\s+(\\d+)/.exec(fs.readFileSync("/proc/" + pid + "/status", "utf8"))?.[1] ?? 0);
const rep = { probes: 0, slow: [], maxProbeMs: 0, rssStartKb: rss(), rssMaxKb: 0 };
rep.rssMaxKb = rep.rssStartKb;
let stopped = false;
function probe() {
  if (stopped) return;
  const t0 = performance.now();
  const done = (status) => {
    const ms = performance.now() - t0;
    rep.probes++;
    rep.maxProbeMs = Math.max(rep.maxProbeMs, ms);
    if (status !== 200 || ms > boundMs) rep.slow.push({ at: Date.now(), ms: Math.round(ms), status });
    try { rep.rssMaxKb = Math.max(rep.rssMaxKb, rss()); } catch {}
    setTimeout(probe, intervalMs);
  };
  const req = http.get(url + "/healthz", { agent: false, timeout: 5000 }, (res) => {
    res.resume();
    res.on("end", () => done(res.statusCode));
  });
  req.on("timeout", () => req.destroy(new Error("timeout")));
  req.on("error", () => done(0));
}
parentPort.on("message", (m) => { if (m === "stop") { stopped = true; parentPort.postMessage(rep); } });
probe();
`;

export function startMonitor(
  srv: FuzzServer,
  opts: { intervalMs: number; boundMs: number },
): { stop(): Promise<MonitorReport> } {
  const w = new Worker(MONITOR, { eval: true, workerData: { url: srv.url, pid: srv.pid, ...opts } });
  return {
    async stop() {
      const rep = new Promise<MonitorReport>((resolve) => w.once("message", resolve));
      w.postMessage("stop");
      const r = await rep;
      await w.terminate();
      return r;
    },
  };
}

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  // biome-ignore lint/suspicious/noExplicitAny: a parsed body of any shape, checked by the assertions
  json: any;
  ms: number;
}

/** Requests sent lately (start and end in Date.now() ms), to name what a slow /healthz probe overlapped. */
export const recent: { t0: number; t1: number; what: string }[] = [];
export function overlapping(from: number, to: number): string[] {
  return recent.filter((r) => r.t0 <= to && r.t1 >= from).map((r) => `${Math.round(r.t1 - r.t0)} ms ${r.what}`);
}

/** The longest time of the requests overlapping [from, to] (0 when none did). */
export function longestOverlapping(from: number, to: number): number {
  return Math.max(0, ...recent.filter((r) => r.t0 <= to && r.t1 >= from).map((r) => r.t1 - r.t0));
}

/** One request with the target sent byte for byte (fetch would normalise it); its time to the last byte. */
export function send(
  base: string,
  req: { method?: string; target: string; headers?: Record<string, string>; body?: string },
  timeoutMs = 10_000,
): Promise<Answer> {
  const u = new URL(base);
  const t0 = performance.now();
  const w0 = Date.now();
  const log = () => {
    recent.push({
      t0: w0,
      t1: Date.now(),
      what: `${req.method ?? "GET"} ${req.target.slice(0, 300)} ${(req.body ?? "").slice(0, 300)}`,
    });
    if (recent.length > 5000) recent.splice(0, 1000);
  };
  return new Promise<Answer>((resolve, reject) => {
    const r = http.request(
      {
        host: u.hostname,
        port: u.port,
        method: req.method ?? "GET",
        path: req.target,
        headers:
          req.body === undefined ? req.headers : { ...req.headers, "content-length": Buffer.byteLength(req.body) },
        agent: false,
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const ms = performance.now() - t0;
          const text = Buffer.concat(chunks).toString("utf8");
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json, ms });
        });
        res.on("error", reject);
      },
    );
    r.on("timeout", () => r.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    r.on("error", reject);
    r.end(req.body);
  }).finally(log);
}
