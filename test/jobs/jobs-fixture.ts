// Real parts for the job fault tests: worker processes, a redis-server of the test's own, a
// generated source big enough (60 companies × 4 years: a run of a few seconds) to kill mid-stage,
// and a table-by-table comparison of two snapshots.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Redis } from "ioredis";
import { generateSample } from "../../data/generate.ts";
import { openDuck, rows } from "../../pipeline/store/duck/duck.ts";

export const ROOT = resolve(import.meta.dirname, "../..");
export const NODE_TS = [process.execPath, "--import", "tsx"];
export const silent = { info: () => undefined, warn: () => undefined };

let source: Promise<string> | null = null;
export function mediumSource(): Promise<string> {
  source ??= generateSample(mkdtempSync(join(tmpdir(), "jobs-src-")), {
    seed: 11,
    companies: 60,
    years: 4,
    vendorRatings: true,
  }).then((r) => r.outDir);
  return source;
}

export interface Proc {
  child: ChildProcess;
  out: string[];
  err: string[];
  exited: Promise<number | null>;
}

/** Spawns `node --import tsx script args` in the project root; collects output lines. */
export function spawnTs(script: string, args: string[], env: Record<string, string>): Proc {
  const child = spawn(NODE_TS[0], [...NODE_TS.slice(1), join(ROOT, script), ...args], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: "warn", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const out: string[] = [];
  const err: string[] = [];
  child.stdout!.on("data", (d) => out.push(...String(d).split("\n").filter(Boolean)));
  child.stderr!.on("data", (d) => err.push(...String(d).split("\n").filter(Boolean)));
  const exited = new Promise<number | null>((res) => child.once("exit", (code) => res(code)));
  return { child, out, err, exited };
}

export async function waitFor<T>(
  what: string,
  f: () => T | Promise<T>,
  ms = 60_000,
  every = 100,
): Promise<NonNullable<T>> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v) return v as NonNullable<T>;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, every));
  }
}

export function startWorker(env: Record<string, string>): Proc & { ready: Promise<void> } {
  const p = spawnTs("test/jobs/worker-entry.ts", [], env);
  return {
    ...p,
    ready: waitFor("worker ready", () => p.out.some((l) => l.startsWith("READY")), 60_000).then(() => undefined),
  };
}

export function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once("error", rej);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}

/** A redis-server of the test's own; `persist` keeps an append-only file so a restart keeps the queue. */
export class OwnRedis {
  proc: ChildProcess | null = null;
  readonly dir = mkdtempSync(join(tmpdir(), "redis-"));
  constructor(
    readonly port: number,
    readonly persist: boolean,
  ) {}
  get url() {
    return `redis://127.0.0.1:${this.port}`;
  }
  async start(): Promise<void> {
    const args = [
      "--port",
      String(this.port),
      "--bind",
      "127.0.0.1",
      "--dir",
      this.dir,
      "--save",
      "",
      ...(this.persist ? ["--appendonly", "yes", "--appendfsync", "always"] : ["--appendonly", "no"]),
    ];
    this.proc = spawn("redis-server", args, { stdio: "ignore" });
    await waitFor(
      "redis up",
      () => {
        try {
          return (
            execFileSync("redis-cli", ["-p", String(this.port), "ping"], {
              encoding: "utf8",
              stdio: ["ignore", "pipe", "ignore"],
            }).trim() === "PONG"
          );
        } catch {
          return false;
        }
      },
      10_000,
      50,
    );
  }
  /** SHUTDOWN: with persistence the append-only file has every write; without, everything is gone. */
  async stop(): Promise<void> {
    const p = this.proc;
    if (!p || p.exitCode !== null) return;
    const gone = new Promise((res) => p.once("exit", res));
    try {
      execFileSync("redis-cli", ["-p", String(this.port), "shutdown", this.persist ? "save" : "nosave"], {
        stdio: "ignore",
      });
    } catch {
      /* the connection drops as it shuts down */
    }
    await gone;
  }
}

const json = (v: unknown) => JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? x.toString() : x));

/** Parquet tables of a snapshot: `<t>.parquet` files and `<t>/` folders of parts. */
const tablesOf = (dir: string) =>
  readdirSync(dir, { withFileTypes: true })
    .filter((e) =>
      e.isFile()
        ? e.name.endsWith(".parquet")
        : e.isDirectory() && readdirSync(join(dir, e.name)).some((f) => f.endsWith(".parquet")),
    )
    .map((e) => (e.isFile() ? e.name : `${e.name}/*.parquet`))
    .sort();

/**
 * Every Parquet table of two snapshots (part folders as one table), row for row (order-independent); returns the
 * differing table names.
 */
export async function differingTables(dirA: string, dirB: string): Promise<string[]> {
  const files = tablesOf(dirA);
  const other = tablesOf(dirB);
  const differ = files.filter((f) => !other.includes(f)).concat(other.filter((f) => !files.includes(f)));
  const db = await openDuck();
  try {
    for (const f of files.filter((x) => other.includes(x))) {
      const read = async (d: string) =>
        (await rows(db.conn, "select * from read_parquet($f)", { f: join(d, f) })).map(json).sort();
      const [a, b] = [await read(dirA), await read(dirB)];
      if (json(a) !== json(b)) differ.push(f);
    }
  } finally {
    db.close();
  }
  return differ;
}

export const stagingFolders = (dataDir: string) =>
  existsSync(join(dataDir, "snapshots"))
    ? readdirSync(join(dataDir, "snapshots")).filter((n) => n.startsWith(".staging-"))
    : [];

export const TEST_REDIS = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

/** Closes the test's in-process workers and deletes every key under `prefixBase-*` on the shared Redis. */
export async function cleanUpQueues(prefixBase: string, workers: { close(): Promise<void> }[] = []): Promise<void> {
  await Promise.all(workers.map((w) => w.close()));
  if ((await import("../redis.ts")).noRedis) return;
  const r = new Redis(TEST_REDIS);
  const keys = await r.keys(`${prefixBase}-*`);
  if (keys.length) await r.del(...keys);
  await r.quit();
}

/** The in-process runner's snapshot of `source` in a fresh store: what a queued run must equal. */
export async function inProcessSnapshot(source: string): Promise<string> {
  const { Catalog } = await import("../../pipeline/store/catalog/catalog.ts");
  const { runPipeline } = await import("../../jobs/local/runner.ts");
  const { snapshotDir } = await import("../../pipeline/store/snapshot/snapshots.ts");
  const dataDir = mkdtempSync(join(tmpdir(), "reference-"));
  const catalog = await Catalog.open(join(dataDir, "catalog.duckdb"));
  const { meta } = await runPipeline({ dataDir, sourceDir: source, catalog, log: silent });
  return snapshotDir(dataDir, meta.id);
}

/** SHA-256 of every file of a snapshot folder but meta.json, by path. */
export function fileHashes(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of readdirSync(dir, { recursive: true, withFileTypes: true }))
    if (f.isFile() && f.name !== "meta.json") {
      const path = join(f.parentPath, f.name);
      out[path.slice(dir.length)] = createHash("sha256").update(readFileSync(path)).digest("hex");
    }
  return out;
}
