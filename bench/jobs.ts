// The job system's cost: `npm run pipeline -- run` on the same source, each time a fresh process:
// in-process (baseline), and queued to worker processes on the same machine and Redis (enqueue, take, progress, publish, result back).
// As one `run` job, 2 workers cannot share a run; as a flow (issue #12 item 1: ingest, then stock
// metrics per ticker range and one backtest per portfolio as child jobs, one publish parent) they
// can: the flow with 2 workers should take ≤ 1/1.7 of its 1-worker time. Sources: the generated
// sample, and JOBS_BENCH_SOURCE (e.g. the 5,000 × 25 universe) when set. JOBS_BENCH_ROUNDS: rounds
// on the sample (2). JOBS_BENCH_PARTITION: companies per stock-metric job of the flow (50).
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Redis } from "ioredis";
import { generateSample } from "../data/generate.ts";

const ROOT = resolve(import.meta.dirname, "..");
const REDIS = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

async function store() {
  return { dataDir: mkdtempSync(join(tmpdir(), "bench-jobs-")) };
}

/** The `run` command as a user starts it, in a fresh process (so both sides start with a cold JIT). */
async function runCommand(sourceDir: string, env: Record<string, string>): Promise<number> {
  const t = performance.now();
  const child = spawn(process.execPath, ["--import", "tsx", join(ROOT, "jobs/cli.ts"), "run", "--source", sourceDir, "--force"], { cwd: ROOT, env: { ...process.env, LOG_LEVEL: "warn", REDIS_URL: "", ...env }, stdio: ["ignore", "ignore", "inherit"] });
  const code = await new Promise<number | null>((res) => child.once("exit", res));
  if (code !== 0) throw new Error(`run exited ${code}`);
  return performance.now() - t;
}

async function inProcess(sourceDir: string): Promise<number> {
  const { dataDir } = await store();
  return runCommand(sourceDir, { DATA_DIR: dataDir });
}

function startWorker(env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", join(ROOT, "jobs/cli.ts"), "worker"], { cwd: ROOT, env: { ...process.env, LOG_LEVEL: "warn", ...env }, stdio: ["ignore", "pipe", "inherit"] });
  return new Promise((res, rej) => {
    child.stdout!.on("data", (d) => /waiting for jobs/.test(String(d)) && res(child));
    child.once("exit", (code) => rej(new Error(`worker exited ${code}`)));
  });
}

const PARTITION = process.env.JOBS_BENCH_PARTITION ?? "50";

async function queued(sourceDir: string, workers: number, flow = false): Promise<number> {
  const { dataDir } = await store();
  const prefix = `bench-jobs-${process.pid}-${Date.now()}`;
  const procs = await Promise.all(Array.from({ length: workers }, () => startWorker({ REDIS_URL: REDIS, DATA_DIR: dataDir, QUEUE_PREFIX: prefix, TICKERS_PER_PARTITION: PARTITION })));
  try {
    return await runCommand(sourceDir, { DATA_DIR: dataDir, REDIS_URL: REDIS, QUEUE_PREFIX: prefix, ...(flow ? { PIPELINE_FLOW: "1" } : {}) });
  } finally {
    for (const p of procs) p.kill("SIGTERM");
    const r = new Redis(REDIS);
    const keys = await r.keys(`${prefix}:*`);
    if (keys.length) await r.del(...keys);
    await r.quit();
  }
}

/** Interleaved rounds (in-process, then each queued variant, again…), the best of each: a shared box's load comes and goes. */
async function section(name: string, sourceDir: string, rounds: number): Promise<void> {
  const variants: [string, () => Promise<number>][] = [
    ["in-process", () => inProcess(sourceDir)],
    ["run job, 1 worker", () => queued(sourceDir, 1)],
    ["run job, 2 workers", () => queued(sourceDir, 2)],
    ["flow, 1 worker", () => queued(sourceDir, 1, true)],
    ["flow, 2 workers", () => queued(sourceDir, 2, true)],
  ];
  const best = variants.map(() => Infinity);
  for (let r = 0; r < rounds; r++) for (const [i, [, run]] of variants.entries()) best[i] = Math.min(best[i], await run());
  const [base, one, two, flow1, flow2] = best;
  const pct = (x: number) => `${(((x - base) / base) * 100).toFixed(1)}%`;
  console.log(`${name}, best of ${rounds} interleaved; load average now ${loadavg().map((l) => l.toFixed(1)).join(" ")}`);
  console.log(`  in-process ${base.toFixed(0)} ms (baseline)`);
  console.log(`  one run job: 1 worker ${one.toFixed(0)} ms (${pct(one)}), 2 workers ${two.toFixed(0)} ms (${(one / two).toFixed(2)}× the 1-worker time: a run job is not shared)`);
  console.log(`  flow (${PARTITION} companies per stock-metric job): 1 worker ${flow1.toFixed(0)} ms (${pct(flow1)}), 2 workers ${flow2.toFixed(0)} ms (${pct(flow2)} beside in-process, target < 10%; ${(flow1 / flow2).toFixed(2)}× the 1-worker flow, target ≥ 1.7×)`);
}

export async function benchJobs(): Promise<void> {
  console.log("\n== jobs: a run in-process vs queued to worker processes");
  const ping = new Redis(REDIS, { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
  const up = await ping.connect().then(() => ping.ping(), () => null);
  ping.disconnect();
  if (up !== "PONG") {
    console.log(`no Redis at ${REDIS}: jobs figures skipped`);
    return;
  }
  console.log(`load average ${loadavg().map((l) => l.toFixed(1)).join(" ")} on ${cpus().length} cores`);
  const rounds = Number(process.env.JOBS_BENCH_ROUNDS ?? 2);
  const sample = mkdtempSync(join(tmpdir(), "bench-jobs-sample-"));
  await generateSample(sample);
  await section("sample (500 companies × 15 years)", sample, rounds);
  const big = process.env.JOBS_BENCH_SOURCE;
  if (big && existsSync(big)) await section(`JOBS_BENCH_SOURCE ${big}`, big, 1);
  else console.log("JOBS_BENCH_SOURCE unset: the large-universe figures skipped");
}

if (import.meta.url === `file://${process.argv[1]}`) await benchJobs();
