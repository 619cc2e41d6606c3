// The listening process. One process by default; with `workers` (WEB_CONCURRENCY) > 1 the
// primary forks that many node:cluster workers, each re-running the caller's script, loading its
// own deps through `makeDeps` and listening on the shared port. The primary serves nothing itself.
//
// The start script calls startServer the same way in every process, e.g.
//   if (cluster.isPrimary) await publishIfNeeded();               // once, before forking
//   const srv = await startServer({ port, makeDeps: loadDeps });  // primary forks, workers listen
import cluster, { type Worker } from "node:cluster";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { type AppDeps, createApp } from "./app.ts";
import { MAX_HEADER_BYTES, onClientError } from "./client-error.ts";
import type { FastPath } from "./fast/fast-path.ts";

export interface ServerOptions {
  port: number;
  host?: string;
  /** Ready-made deps (single process only). */
  deps?: AppDeps;
  /** Deps factory; required for cluster mode (each worker calls it). */
  makeDeps?: () => Promise<AppDeps>;
  /** Worker processes (the start script passes WEB_CONCURRENCY); default 1. */
  workers?: number;
}

export interface RunningServer {
  url: string;
  close(): Promise<void>;
}

const workerCount = (opts: ServerOptions) => {
  const n = opts.workers ?? 1;
  return Number.isFinite(n) && n > 1 ? Math.floor(n) : 1;
};

const urlOf = (host: string | undefined, port: number) =>
  `http://${!host || host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host}:${port}`;

export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  const n = workerCount(opts);
  if (n > 1 && cluster.isPrimary) return startPrimary(opts, n);
  return startSingle(opts);
}

async function startSingle(opts: ServerOptions): Promise<RunningServer> {
  const deps = opts.deps ?? (opts.makeDeps ? await opts.makeDeps() : undefined);
  if (!deps) throw new Error("startServer needs deps or makeDeps");
  const app = createApp(deps);
  // the fast path answers cached reads before Express (api/fast/fast-path.ts); the rest go to Express
  const fast = app.locals.fastPath as FastPath | null;
  const server = http.createServer(
    { maxHeaderSize: MAX_HEADER_BYTES },
    fast === null
      ? app
      : (req, res) => {
          if (!fast(req, res)) app(req, res);
        },
  );
  server.on("clientError", onClientError); // JSON errors for requests the parser refuses
  server.keepAliveTimeout = 65_000; // longer than common load balancer idle timeouts
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeIdleConnections();
      setTimeout(() => server.closeAllConnections(), 5_000).unref();
    }));
  if (cluster.isWorker) {
    // the primary disconnects us on shutdown: finish in-flight requests, then leave
    process.once("disconnect", () => void close().then(() => process.exit(0)));
    deps.logger.info({ port, worker: cluster.worker?.id }, "api worker listening");
  }
  return { url: urlOf(opts.host, port), close };
}

async function startPrimary(opts: ServerOptions, n: number): Promise<RunningServer> {
  if (!opts.makeDeps)
    throw new Error("cluster mode (WEB_CONCURRENCY > 1) needs makeDeps: each worker loads its own deps");
  const pool = new WorkerPool(n);
  const port = await allListening(pool, n);
  return { url: urlOf(opts.host, port), close: () => pool.close() };
}

/** The forked server processes, kept `n` strong until closed. */
class WorkerPool {
  readonly workers = new Set<Worker>();
  closing = false;
  private restarts: number[] = [];
  constructor(private readonly n: number) {}

  fork(): Worker {
    const w = cluster.fork({ WEB_CONCURRENCY: String(this.n) });
    this.workers.add(w);
    w.once("exit", (code, signal) => {
      this.workers.delete(w);
      if (!this.closing) this.replace(code, signal);
    });
    return w;
  }

  /** Keeps the pool full, but gives up on a crash loop (more than n restarts in a minute). */
  private replace(code: number, signal: string): void {
    const now = Date.now();
    this.restarts = this.restarts.filter((t) => now - t < 60_000);
    if (this.restarts.length > this.n) {
      process.emitWarning(`api worker exited (${signal ?? code}); too many restarts, not restarting`);
      return;
    }
    this.restarts.push(now);
    this.fork();
  }

  /** Disconnects every worker (it finishes its in-flight requests), killing one still there after 10 s. */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all([...this.workers].map(stopWorker));
  }
}

const stopWorker = (w: Worker) =>
  new Promise<void>((resolve) => {
    if (w.isDead()) return resolve();
    const t = setTimeout(() => w.kill("SIGKILL"), 10_000);
    w.once("exit", () => {
      clearTimeout(t);
      resolve();
    });
    w.disconnect();
  });

/** Forks the pool's `n` workers; resolves with their port once all listen, rejects when one exits first. */
function allListening(pool: WorkerPool, n: number): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    let listening = 0;
    let seenPort = 0;
    const onListening = (_w: Worker, address: { port: number }) => {
      seenPort = address.port;
      if (++listening === n) {
        cluster.off("listening", onListening);
        cluster.off("exit", onEarlyExit);
        resolve(seenPort);
      }
    };
    const onEarlyExit = (_w: Worker, code: number) => {
      cluster.off("listening", onListening);
      cluster.off("exit", onEarlyExit);
      pool.closing = true;
      for (const w of pool.workers) w.kill();
      reject(new Error(`an api worker exited with code ${code} before listening`));
    };
    cluster.on("listening", onListening);
    cluster.on("exit", onEarlyExit);
    for (let i = 0; i < n; i++) pool.fork();
  });
}
