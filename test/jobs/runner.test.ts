// One suite, two runners: the in-process path and BullMQ workers on a real Redis
// (127.0.0.1:6379, as .ci/run guarantees) must publish the same way and fail the same way.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Worker } from "bullmq";
import { afterAll, describe, expect, it } from "vitest";
import { dispatchRun, JobFailedError } from "../../jobs/queue/dispatch.ts";
import { startPipelineWorker } from "../../jobs/worker/worker.ts";
import { SourceRejectedError } from "../../pipeline/sources/report.ts";
import { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { loadSnapshot } from "../../pipeline/store/read/load-snapshot.ts";
import { readManifest } from "../../pipeline/store/snapshot/snapshots.ts";
import { writeTinySource } from "../fixtures/tiny-source.ts";
import { noRedis } from "../redis.ts";
import { cleanUpQueues } from "./jobs-fixture.ts";

const REDIS = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const silent = { info: () => undefined, warn: () => undefined };
const prefixBase = `test-${process.pid}-${Date.now()}`;
let setups = 0;
const workers: Worker[] = [];

afterAll(() => cleanUpQueues(prefixBase, workers));

for (const mode of ["in-process", "bullmq"] as const) {
  describe.skipIf(mode === "bullmq" && noRedis)(`pipeline run (${mode})`, () => {
    async function setup() {
      const dataDir = mkdtempSync(join(tmpdir(), `jobs-${mode}-`));
      const catalog = await Catalog.open(join(dataDir, "catalog.duckdb"));
      // A queue per setup: a worker serves one store, so it must only see that store's jobs.
      const prefix = `${prefixBase}-${setups++}`;
      if (mode === "bullmq")
        workers.push(startPipelineWorker({ redisUrl: REDIS, dataDir, catalog, log: silent, prefix }));
      const run = (sourceDir: string) =>
        dispatchRun({ dataDir, sourceDir, catalog, log: silent, redisUrl: mode === "bullmq" ? REDIS : null, prefix });
      return { dataDir, run };
    }

    it("publishes a snapshot the loader can serve", async () => {
      const { dataDir, run } = await setup();
      const r = await run(writeTinySource());
      expect(readManifest(dataDir)?.snapshotId).toBe(r.snapshotId);
      const snap = await loadSnapshot(dataDir, r.snapshotId);
      expect(snap.companies.map((c) => c.ticker)).toEqual(["AAA", "BBB", "CCC", "DDD"]);
      expect(snap.ratingDates).toEqual(["2024-01-01", "2024-01-29"]);
      expect(snap.stockReturns.get("AAA")?.returns[0]).toBe(0);
      // AAA closes 10.00 then 10.10: the second daily return is 0.01 exactly as computed by hand.
      expect(snap.stockReturns.get("AAA")?.returns[1]).toBeCloseTo(0.01, 12);
      expect(snap.benchmarks.map((b) => b.id)).toEqual(["1", "2"]);
      expect(snap.portfolios.get("101")?.holdings.map((h) => h.ticker)).toEqual(["CCC", "DDD"]);
      expect(snap.metrics.get("stock:AAA|")?.[0]).toEqual({ metric: "Start Period", AAA: "2024-01-01" });
    });

    it("a rejected source publishes nothing and leaves the previous snapshot served", async () => {
      const { dataDir, run } = await setup();
      const good = await run(writeTinySource());
      const bad = writeTinySource((f) => ({
        "prices.csv": f["prices.csv"].replace(/\n([^\n]+),1000,AAA\n/, "\n$1,1000,AAA\n2024-01-01,,,,-3,1,BBB\n"),
      }));
      const err = await run(bad).catch((e) => e);
      if (mode === "in-process") {
        expect(err).toBeInstanceOf(SourceRejectedError);
        expect((err as SourceRejectedError).rejects.map((r) => r.reason)).toContain("must be positive");
      } else {
        expect(err).toBeInstanceOf(JobFailedError);
        expect(String(err.message)).toMatch(/must be positive/);
      }
      expect(readManifest(dataDir)?.snapshotId).toBe(good.snapshotId);
    });
  });
}
