// The worker inside `npm start` (rebalanceInChild, as jobs/host/start.ts starts it) runs a `rebalance`
// job in a process of its own (jobs/local/rebalance-child.ts), never in the serving process: here this
// process's catalog handle refuses every read of a portfolio, so a rebalance computed in this
// process would fail; the job publishes the portfolio's backtest all the same, with its job id in
// the manifest's log. Real Redis (TEST_REDIS_URL), a queue prefix of this test's own.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Worker } from "bullmq";
import { afterAll, describe, expect, it } from "vitest";
import { dispatchRun } from "../../jobs/queue/dispatch.ts";
import { pipelineQueue } from "../../jobs/queue/queue.ts";
import { queueRebalancer, rebalanceRequest } from "../../jobs/queue/rebalance-requests.ts";
import { startPipelineWorker } from "../../jobs/worker/worker.ts";
import { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { publishedSince, readManifest } from "../../pipeline/store/snapshot/snapshots.ts";
import { writeTinySource } from "../fixtures/tiny-source.ts";
import { userRules } from "../portfolios/universe-fixture.ts";
import { noRedis, TEST_REDIS } from "../redis.ts";
import { cleanUpQueues, silent, waitFor } from "./jobs-fixture.ts";

const prefix = `test-rbchild-${process.pid}-${Date.now()}`;
const workers: Worker[] = [];
afterAll(() => cleanUpQueues(prefix, workers));

describe.skipIf(noRedis)("a rebalance job on the worker inside npm start", () => {
  it("runs in a process of its own and publishes the portfolio", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "rebalance-child-"));
    const catalog = await Catalog.open(join(dataDir, "catalog.duckdb"));
    await dispatchRun({ dataDir, sourceDir: writeTinySource(), catalog, log: silent, redisUrl: null });
    const user = await catalog.createUser({ email: "c@example.com", firstName: "", lastName: "", phoneNumber: "" });
    const p = await catalog.createUserPortfolio(user.id, userRules({ name: "Child" }));
    await catalog.idle();
    const since = readManifest(dataDir)!.version ?? 0;
    const api = queueRebalancer(TEST_REDIS, catalog, silent, prefix, dataDir);
    api.request(p.id);
    await api.close();
    const expected = rebalanceRequest(catalog, p.id).jobId;

    // The serving process's handle: refreshed and its path handed on, never read for a portfolio.
    const served = await Catalog.open(join(dataDir, "catalog.duckdb"));
    const refuse = () => {
      throw new Error("the rebalance read the catalog in the serving process");
    };
    Object.assign(served, { userPortfolio: refuse, allUserPortfolios: refuse });
    const worker = startPipelineWorker({
      redisUrl: TEST_REDIS,
      dataDir,
      catalog: served,
      log: silent,
      prefix,
      rebalanceInChild: true,
    });
    workers.push(worker);
    const queue = pipelineQueue(TEST_REDIS, prefix);
    try {
      await waitFor(
        "the rebalance job to finish",
        async () => ["completed", "failed"].includes(await (await queue.getJob(expected))!.getState()),
        120_000,
      );
      const job = (await queue.getJob(expected))!;
      expect(job.failedReason ?? null).toBeNull();
      const snapshotId = (job.returnvalue as { snapshotId: string }).snapshotId;
      const publishes = publishedSince(readManifest(dataDir), since);
      expect(publishes.map((e) => [e.kind, e.portfolio, e.job, e.snapshotId])).toEqual([
        ["rebalance", p.id, expected, snapshotId],
      ]);
    } finally {
      await queue.close();
    }
  }, 180_000);
});
