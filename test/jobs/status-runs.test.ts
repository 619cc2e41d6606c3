// `status` during and after a run as a flow (real Redis, a real worker process): the run's progress
// counts all its jobs and never goes backwards, and the finished run counts every job it had.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { gatherStatus, type RunStatus } from "../../jobs/cli/status.ts";
import { statusText } from "../../jobs/cli/status-text.ts";
import { dispatchRun } from "../../jobs/queue/dispatch.ts";
import { runFlowIds } from "../../jobs/queue/flow.ts";
import { sourceStamp } from "../../pipeline/sources/fingerprint.ts";
import { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { readMeta } from "../../pipeline/store/snapshot/snapshots.ts";
import { noRedis, TEST_REDIS } from "../redis.ts";
import { cleanUpQueues, mediumSource, type Proc, silent, startWorker } from "./jobs-fixture.ts";
import { runScript } from "./process.ts";

const prefixBase = `test-status-${process.pid}-${Date.now()}`;
const procs: Proc[] = [];
afterAll(async () => {
  for (const p of procs) if (p.child.exitCode === null) p.child.kill("SIGKILL");
  await cleanUpQueues(prefixBase);
});

describe.skipIf(noRedis)("status of a run as a flow", () => {
  it("progress over all the run's jobs never goes backwards; the finished run counts them all", async () => {
    const source = await mediumSource();
    const dataDir = mkdtempSync(join(tmpdir(), "status-runs-"));
    const prefix = `${prefixBase}-flow`;
    // 60 companies in ranges of 10: 6 stock-metric and 6 financials jobs besides the backtests.
    const env = { REDIS_URL: TEST_REDIS, DATA_DIR: dataDir, QUEUE_PREFIX: prefix, TICKERS_PER_PARTITION: "10" };
    const worker = startWorker(env);
    procs.push(worker);
    await worker.ready;
    const catalog = await Catalog.open(join(dataDir, "catalog.duckdb"));
    const parent = runFlowIds(sourceStamp(source)).parent;
    const seen: RunStatus[] = [];
    let done = false;
    const run = dispatchRun({
      dataDir,
      sourceDir: source,
      catalog,
      log: silent,
      redisUrl: TEST_REDIS,
      prefix,
      timeoutMs: 120_000,
      flow: true,
    }).finally(() => (done = true));
    while (!done) {
      const st = await gatherStatus(dataDir, TEST_REDIS, prefix);
      const r = st.queue!.runs.find((x) => x.id === parent);
      if (r) seen.push(r);
      await new Promise((res) => setTimeout(res, 100));
    }
    const { snapshotId } = await run;
    const progress = seen.map((r) => r.progress).filter((p): p is number => p !== null);
    for (let i = 1; i < progress.length; i++) expect(progress[i]).toBeGreaterThanOrEqual(progress[i - 1]!);
    // Until ingest and fundamentals have added the partition jobs there is no total, so no percentage.
    for (const r of seen) if (!r.jobs.allKnown) expect(r.progress).toBeNull();

    const st = await gatherStatus(dataDir, TEST_REDIS, prefix);
    const last = st.queue!.runs.find((x) => x.id === parent)!;
    // ingest and fundamentals, 6 metric and 6 financials partitions, the rating evidence's step job
    // (pipeline/run/plan.ts), one backtest per portfolio
    const jobs = 2 + 6 + 6 + 1 + readMeta(dataDir, snapshotId).counts.portfolios!;
    expect(last).toEqual({
      id: parent,
      state: "completed",
      jobs: { done: jobs, known: jobs, allKnown: true },
      progress: 1,
    });
    const text = statusText(st, dataDir);
    expect(text).toContain(`run ${parent}: completed, ${jobs} of ${jobs} jobs done (100 %)`);
    expect(text.split("\n")[0]).toMatch(new RegExp(`^snapshot ${snapshotId} \\(version 1\\), published `));

    // Piped (not a terminal), the CLI keeps printing JSON; --json says so on a terminal too.
    for (const args of [["status"], ["status", "--json"]]) {
      const cli = runScript("jobs/cli/pipeline.ts", args, env);
      expect(cli.code).toBe(0);
      expect(JSON.parse(cli.stdout).queue.runs).toContainEqual(last);
    }
    worker.child.kill("SIGTERM");
  }, 180_000);
});
