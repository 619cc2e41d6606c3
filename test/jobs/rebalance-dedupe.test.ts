// One portfolio change asked for by the API (its requestRebalance port) and by the CLI
// (`pipeline rebalance --portfolio ID`, a real process) is one `rebalance` job: both name it with
// the one recipe, the second joins the first, one worker runs it once and one snapshot is
// published. Real Redis (TEST_REDIS_URL), a queue prefix of this test's own.
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
import { cleanUpQueues, silent, spawnTs, waitFor } from "./jobs-fixture.ts";

const REDIS = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const prefixBase = `test-rbdedupe-${process.pid}-${Date.now()}`;
const workers: Worker[] = [];
afterAll(() => cleanUpQueues(prefixBase, workers));

describe("a rebalance asked for by the API and by the CLI", () => {
  it("is one job with one id, run once", async () => {
    const prefix = `${prefixBase}-one`;
    const dataDir = mkdtempSync(join(tmpdir(), "rebalance-dedupe-"));
    const catalog = await Catalog.open(join(dataDir, "catalog.duckdb"));
    await dispatchRun({ dataDir, sourceDir: writeTinySource(), catalog, log: silent, redisUrl: null });
    const user = await catalog.createUser({ email: "d@example.com", firstName: "", lastName: "", phoneNumber: "" });
    const p = await catalog.createUserPortfolio(user.id, userRules({ name: "Mine" }));
    await catalog.idle();
    const since = readManifest(dataDir)!.version ?? 0;

    // the API's port (what a GraphQL mutation calls), no worker yet: the job waits
    const api = queueRebalancer(REDIS, catalog, silent, prefix, dataDir);
    api.request(p.id);
    await api.close();
    const queue = pipelineQueue(REDIS, prefix);
    try {
      const expected = rebalanceRequest(catalog, p.id).jobId;
      expect((await queue.getJobs()).map((j) => j.id)).toEqual([expected]);

      const cli = spawnTs("jobs/cli/pipeline.ts", ["rebalance", "--portfolio", p.id, "--timeout", "120"], {
        DATA_DIR: dataDir,
        REDIS_URL: REDIS,
        QUEUE_PREFIX: prefix,
      });
      const lines = () => [...cli.out, ...cli.err];
      await waitFor("the CLI joining the API's job", () => lines().some((l) => l.includes(expected)), 60_000);
      expect(lines().join("\n")).toContain(`an equal job ${expected} is already queued`);

      const completed: string[] = [];
      const worker = startPipelineWorker({
        redisUrl: REDIS,
        dataDir,
        catalog: await Catalog.open(join(dataDir, "catalog.duckdb")),
        log: silent,
        prefix,
      });
      workers.push(worker);
      worker.on("completed", (job) => void completed.push(job.id!));
      expect(await cli.exited).toBe(0);

      const job = (await queue.getJob(expected))!;
      expect(await job.getState()).toBe("completed");
      const snapshotId = (job.returnvalue as { snapshotId: string }).snapshotId;
      expect(lines().join("\n")).toContain(`portfolio ${p.id} recomputed; published snapshot ${snapshotId}`);
      expect(completed).toEqual([expected]);
      expect((await queue.getJobs()).map((j) => j.id)).toEqual([expected]);
      const publishes = publishedSince(readManifest(dataDir), since);
      expect(publishes.map((e) => [e.kind, e.portfolio])).toEqual([["rebalance", p.id]]);
      expect(readManifest(dataDir)!.snapshotId).toBe(snapshotId);
    } finally {
      await queue.close();
    }
  }, 180_000);
});
