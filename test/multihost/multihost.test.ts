// Several hosts on one machine (network namespaces, test/multihost/topology.ts): Redis on one,
// two API hosts, two worker hosts; the store is one folder all of them see, standing for a shared
// volume. What crosses the network is what a deployment of several machines relies on: the queue,
// the shared rate limits and failed-auth throttle, and the store's manifest that every API host
// follows. Skips, saying why, where namespaces cannot be made (not root, no iproute2).
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pipelineQueue } from "../../jobs/queue/queue.ts";
import { readManifest } from "../../pipeline/store/snapshot/snapshots.ts";
import { writeTinySource } from "../fixtures/tiny-source.ts";
import { type HostProc, ROOT, Topology, unavailable } from "./topology.ts";

const why = unavailable();
if (why) console.warn(`multihost tests skipped: ${why}`);

const DEMO_KEY = "multihost-demo-key-0123456789";
const NODE = [process.execPath, "--import", "tsx"];
type GqlData = { createWatchlist?: { success: boolean }; watchlistsForUser?: { name: string }[] };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(f: () => Promise<T | undefined | null | false>, ms: number, what: string): Promise<T> {
  const end = Date.now() + ms;
  let last: unknown;
  while (Date.now() < end) {
    try {
      const v = await f();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    await sleep(200);
  }
  throw new Error(`${what} not within ${ms} ms${last ? ` (last error: ${String(last)})` : ""}`);
}

describe.skipIf(why !== null)("several hosts sharing a store, Redis on a host of its own", () => {
  let topo: Topology;
  let dataDir: string;
  let redisUrl: string;
  const api: Record<string, { url: string; proc: HostProc }> = {};
  const workers: Record<string, HostProc> = {};

  const get = (host: string, path: string, key = DEMO_KEY) =>
    fetch(`${api[host].url}${path}`, { headers: { api_key: key }, signal: AbortSignal.timeout(5_000) });
  const snapshotOf = async (host: string) =>
    ((await (await get(host, "/healthz")).json()) as { snapshot: string | null }).snapshot;
  const graphql = async (host: string, query: string, variables: Record<string, unknown> = {}) => {
    const r = await fetch(`${api[host].url}/graphiql`, {
      method: "POST",
      headers: { api_key: DEMO_KEY, "content-type": "application/json" },
      body: JSON.stringify({ query, variables }),
      signal: AbortSignal.timeout(10_000),
    });
    return { status: r.status, body: (await r.json()) as { data?: GqlData; errors?: unknown[] } };
  };
  /** `npm run pipeline -- run` from the machine itself (outside every host), through the queue. */
  const runThroughQueue = (source: string) => {
    const child = spawn(NODE[0], [...NODE.slice(1), "jobs/cli/pipeline.ts", "run", "--source", source], {
      cwd: ROOT,
      env: { ...process.env, REDIS_URL: redisUrl, DATA_DIR: dataDir, LOG_FORMAT: "json", SOURCE_DIR: "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (b) => (out += b));
    child.stderr.on("data", (b) => (out += b));
    return { done: new Promise<number | null>((res) => child.on("exit", res)), output: () => out };
  };

  beforeAll(async () => {
    topo = new Topology();
    const redisHost = topo.add("redis");
    for (const h of ["api1", "api2", "worker1", "worker2"]) topo.add(h);
    dataDir = mkdtempSync(join(tmpdir(), "multihost-store-"));
    redisUrl = `redis://${redisHost}:6379`;
    const redis = topo.start("redis", "redis-server", [
      ...["--bind", "0.0.0.0", "--port", "6379", "--save", "", "--appendonly", "no", "--protected-mode", "no"],
    ]);
    await redis.waitFor(/Ready to accept connections/, 20_000);
    const env = { REDIS_URL: redisUrl, DATA_DIR: dataDir, LOG_FORMAT: "json", SOURCE_DIR: "", LOG_LEVEL: "info" };
    for (const w of ["worker1", "worker2"]) {
      workers[w] = topo.start(w, NODE[0], [...NODE.slice(1), "jobs/cli/pipeline.ts", "worker"], env);
      await workers[w].waitFor(/waiting for jobs/);
    }
    const source = writeTinySource();
    for (const h of ["api1", "api2"]) {
      const proc = topo.start(h, NODE[0], [...NODE.slice(1), "jobs/host/start.ts"], {
        ...env,
        PORT: "8080",
        SOURCE_DIR: source,
        START_WORKER: "0",
        DEMO_API_KEY: DEMO_KEY,
      });
      api[h] = { url: `http://${topo.address(h)}:8080`, proc };
    }
    // Both publish the same source: through the queue that is one job, one snapshot.
    const first = await until(async () => readManifest(dataDir)?.snapshotId, 180_000, "a first snapshot");
    for (const h of ["api1", "api2"])
      await until(async () => (await snapshotOf(h)) === first, 60_000, `${h} serving`).catch((e) => {
        throw new Error(`${e.message}\n${h} said:\n${api[h].proc.output().slice(-3000)}`);
      });
  }, 300_000);

  afterAll(async () => {
    await topo?.destroy();
  });

  it("one snapshot for the two hosts that asked for the same source, and both serve it", async () => {
    const m = readManifest(dataDir)!;
    expect(m.log?.filter((e) => e.kind === "run")).toHaveLength(1);
    expect(await snapshotOf("api1")).toBe(m.snapshotId);
    expect(await snapshotOf("api2")).toBe(m.snapshotId);
  });

  it("a run through the queue publishes once, and both API hosts swap to it", async () => {
    const before = readManifest(dataDir)!.snapshotId;
    // A new source: the same companies with one more rating date (the last row's date moved on).
    const source = writeTinySource((f) => ({ "ratings.csv": f["ratings.csv"].replaceAll("2024-01-29", "2024-02-05") }));
    const run = runThroughQueue(source);
    expect(await run.done, run.output()).toBe(0);
    const after = readManifest(dataDir)!.snapshotId;
    expect(after).not.toBe(before);
    for (const h of ["api1", "api2"]) await until(async () => (await snapshotOf(h)) === after, 20_000, `${h} swap`);
    // Which worker host took which job is the queue's business; both are connected to it.
    expect(workers.worker1.output() + workers.worker2.output()).toMatch(/"job"/);
  }, 240_000);

  it("a watchlist created on API host 1 is read on API host 2", async () => {
    const name = `shared-${Date.now()}`;
    const made = await graphql(
      "api1",
      'mutation($n: String!) { createWatchlist(input: {name: $n, stockTickers: ["AAA"]}) ' +
        "{ success errors { field messages } } }",
      { n: name },
    );
    expect(made.body.data?.createWatchlist, JSON.stringify(made.body)).toMatchObject({ success: true });
    const seen = await until(
      async () => {
        const r = await graphql("api2", "{ watchlistsForUser { name } }");
        const names = (r.body.data?.watchlistsForUser ?? []).map((w) => w.name);
        return names.includes(name) ? names : null;
      },
      5_000,
      "the watchlist on api2",
    );
    expect(seen).toContain(name);
  });

  it("Redis host cut off: both API hosts serve reads and writes; a queued run ends once it is back", async () => {
    const before = readManifest(dataDir)!.snapshotId;
    const source = writeTinySource((f) => ({ "ratings.csv": f["ratings.csv"].replaceAll("2024-01-29", "2024-02-06") }));
    const run = runThroughQueue(source);
    await until(async () => /queued|running|waits/.test(run.output()), 60_000, "the run enqueued");
    topo.cut("redis");
    try {
      for (const h of ["api1", "api2"]) {
        const t = Date.now();
        const r = await get(h, "/data/v1/stock_ratings?limit=5");
        expect(r.status, `${h} read while Redis is away`).toBe(200);
        expect(Date.now() - t, `${h} read latency while Redis is away`).toBeLessThan(3_000);
      }
      const made = await graphql(
        "api2",
        'mutation { createWatchlist(input: {name: "while-redis-away", stockTickers: ["BBB"]}) { success } }',
      );
      expect(made.body.data?.createWatchlist).toEqual({ success: true });
      await sleep(8_000);
      for (const h of ["api1", "api2"]) {
        // One line per outage says that limits count per process meanwhile.
        const said = api[h].proc.output().match(/rate limits \(counting per process meanwhile\): Redis unreachable/g);
        expect(said?.length, `${h}: ${api[h].proc.output().slice(-2000)}`).toBe(1);
      }
    } finally {
      topo.heal("redis");
    }
    expect(await run.done, run.output()).toBe(0);
    const after = readManifest(dataDir)!.snapshotId;
    expect(after).not.toBe(before);
    for (const h of ["api1", "api2"]) {
      await until(async () => (await snapshotOf(h)) === after, 20_000, `${h} swap`);
      await api[h].proc.waitFor(/rate limits \(counting per process meanwhile\): Redis reachable again/, 20_000);
    }
  }, 240_000);

  it("a worker host cut off mid-run: its job finishes on the other worker, one snapshot is published", async () => {
    const log = () => readManifest(dataDir)!.log ?? [];
    const published = log().length;
    const before = readManifest(dataDir)!.snapshotId;
    const queue = pipelineQueue(redisUrl);
    try {
      // worker2 away first, so the job caught running below is worker1's
      topo.cut("worker2");
      const source = writeTinySource((f) => ({
        "ratings.csv": f["ratings.csv"].replaceAll("2024-01-29", "2024-02-07"),
      }));
      const run = runThroughQueue(source);
      // a job worker1 holds when it drops off: read after the cut (a short job seen running before
      // it may have completed in between), so the jobs still active are the ones its lock holds
      const active = await until(
        async () => {
          if (!(await queue.getActive()).length) return null;
          topo.cut("worker1");
          const ids = (await queue.getActive()).map((j) => j.id!);
          if (!ids.length) topo.heal("worker1");
          return ids.length ? ids : null;
        },
        60_000,
        "a job running",
      );
      topo.heal("worker2");
      // worker1 no longer renews the job's lock: once it lapses, the stalled check hands it to worker2
      expect(await run.done, `${run.output()}\nactive when cut: ${active}`).toBe(0);
      const after = readManifest(dataDir)!.snapshotId;
      expect(after).not.toBe(before);
      expect(log().length).toBe(published + 1);
      // the job worker1 was running when it dropped off is among those worker2 completed
      const completedBy2 = workers.worker2
        .output()
        .split("\n")
        .filter((l) => l.includes("pipeline job completed"))
        .map((l) => JSON.parse(l).job as string);
      expect(completedBy2).toContain(active[0]);
      for (const h of ["api1", "api2"]) await until(async () => (await snapshotOf(h)) === after, 20_000, `${h} swap`);
      // worker1 back on the network publishes nothing more of that run
      topo.heal("worker1");
      await sleep(5_000);
      expect(readManifest(dataDir)!.snapshotId).toBe(after);
      expect(log().length).toBe(published + 1);
    } finally {
      topo.heal("worker1");
      topo.heal("worker2");
      await queue.close();
    }
  }, 300_000);

  it("20 failed authentications split over the API hosts; the next locks the address out on both", async () => {
    for (let i = 0; i < 20; i++) {
      const r = await get(i % 2 ? "api2" : "api1", "/data/v1/stock_ratings", `wrong-key-${i}-0123456789abcdef`);
      expect(r.status, `attempt ${i + 1}`).toBe(401);
    }
    // The 21st goes over the count both hosts share in Redis.
    expect((await get("api1", "/data/v1/stock_ratings", "wrong-key-21-0123456789abcdef")).status).toBe(429);
    // api2 never saw that one, yet refuses the address, even with the right key (a guesser must not
    // learn from another host that a guess was right).
    await until(async () => (await get("api2", "/data/v1/stock_ratings")).status === 429, 2_000, "api2 refusing");
    expect((await get("api1", "/data/v1/stock_ratings")).status).toBe(429);
  });
});

describe.skipIf(why !== null)("two API hosts with the accounts on a PostgreSQL host", () => {
  let topo: Topology;
  const url: Record<string, string> = {};
  const procs: Record<string, HostProc> = {};

  const get = (host: string, path: string) =>
    fetch(`${url[host]}${path}`, { headers: { api_key: DEMO_KEY }, signal: AbortSignal.timeout(10_000) });
  const createWatchlist = async (host: string, name: string) => {
    const r = await fetch(`${url[host]}/graphiql`, {
      method: "POST",
      headers: { api_key: DEMO_KEY, "content-type": "application/json" },
      body: JSON.stringify({
        query: "mutation($n: String!) { createWatchlist(input: {name: $n}) { success } }",
        variables: { n: name },
      }),
      signal: AbortSignal.timeout(20_000),
    });
    return {
      status: r.status,
      body: (await r.json()) as { data?: unknown; errors?: { extensions?: { code?: string } }[] },
    };
  };
  const names = async (host: string) => {
    const r = await fetch(`${url[host]}/graphiql`, {
      method: "POST",
      headers: { api_key: DEMO_KEY, "content-type": "application/json" },
      body: JSON.stringify({ query: "{ watchlistsForUser { name } }" }),
      signal: AbortSignal.timeout(10_000),
    });
    const body = (await r.json()) as { data?: { watchlistsForUser?: { name: string }[] } };
    return (body.data?.watchlistsForUser ?? []).map((w) => w.name);
  };

  beforeAll(async () => {
    topo = new Topology();
    const redisHost = topo.add("redis");
    topo.add("pg");
    for (const h of ["api1", "api2"]) topo.add(h);
    const redis = topo.start("redis", "redis-server", [
      ...["--bind", "0.0.0.0", "--port", "6379", "--save", "", "--appendonly", "no", "--protected-mode", "no"],
    ]);
    await redis.waitFor(/Ready to accept connections/, 20_000);
    const databaseUrl = await topo.startPostgres("pg");
    const dataDir = mkdtempSync(join(tmpdir(), "multihost-pg-store-"));
    const source = writeTinySource();
    for (const h of ["api1", "api2"]) {
      procs[h] = topo.start(h, NODE[0], [...NODE.slice(1), "jobs/host/start.ts"], {
        ...{ REDIS_URL: `redis://${redisHost}:6379`, DATA_DIR: dataDir, DATABASE_URL: databaseUrl },
        ...{ LOG_FORMAT: "json", PORT: "8080", SOURCE_DIR: source, DEMO_API_KEY: DEMO_KEY },
      });
      url[h] = `http://${topo.address(h)}:8080`;
    }
    for (const h of ["api1", "api2"])
      await until(async () => (await get(h, "/healthz")).status === 200, 180_000, `${h} serving`).catch((e) => {
        throw new Error(`${e.message}\n${h} said:\n${procs[h].output().slice(-3000)}`);
      });
  }, 300_000);

  afterAll(async () => {
    await topo?.destroy();
  });

  it("a GraphQL write on API host 1 is read on API host 2 at once (NOTIFY, no polling)", async () => {
    expect((await createWatchlist("api1", "written-on-1")).body.data).toEqual({ createWatchlist: { success: true } });
    const t = Date.now();
    await until(async () => (await names("api2")).includes("written-on-1"), 1_000, "the watchlist on api2");
    expect(Date.now() - t).toBeLessThan(1_000);
  });

  it("PostgreSQL host cut off: reads serve, writes UNAVAILABLE (503), nothing acknowledged lost", async () => {
    expect((await createWatchlist("api2", "before-the-cut")).body.data).toEqual({ createWatchlist: { success: true } });
    topo.cut("pg");
    try {
      for (const h of ["api1", "api2"]) expect((await get(h, "/data/v1/stock_ratings?limit=5")).status).toBe(200);
      const refused = await createWatchlist("api1", "during-the-cut");
      // a field error of the mutation (HTTP 200, as GraphQL answers a failed field), within the request's limit
      expect(refused.body.errors?.[0]?.extensions, JSON.stringify(refused.body)).toMatchObject({
        code: "UNAVAILABLE",
        status: 503,
      });
      expect(await names("api2")).toContain("before-the-cut");
    } finally {
      topo.heal("pg");
    }
    const after = await until(
      async () => ((await createWatchlist("api2", "after-the-cut")).status === 200 ? names("api1") : null),
      30_000,
      "writes again",
    );
    expect(after).toEqual(expect.arrayContaining(["before-the-cut", "written-on-1"]));
    expect(after).not.toContain("during-the-cut");
  }, 120_000);
});
