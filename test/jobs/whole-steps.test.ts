// Issue #28: a whole step added to a full run's plan (pipeline/run/plan.ts) and its stage function,
// nothing else, runs in every executor. The plan module is the real one with the toy steps of
// whole-step-toys.ts added as an entry there would add them; then the flow places each (a `step` job
// added by the job of the whole step it waits for, or in the publish job), and a full run inline and
// one as a flow on two workers (a step job failing once, retried) publish the same tables.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Worker } from "bullmq";
import { afterAll, describe, expect, it, vi } from "vitest";
import { runPipeline } from "../../jobs/local/runner.ts";
import { dispatchRun } from "../../jobs/queue/dispatch.ts";
import { FlowPlanError, runFlowIds, stepJobsAfter, wholeStepPlacement } from "../../jobs/queue/flow.ts";
import { startPipelineWorker } from "../../jobs/worker/worker.ts";
import { buildRunPlan, type PlanStep } from "../../pipeline/run/plan.ts";
import { sourceStamp } from "../../pipeline/sources/fingerprint.ts";
import { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { openDuck, rows } from "../../pipeline/store/duck/duck.ts";
import { snapshotDir } from "../../pipeline/store/snapshot/snapshots.ts";
import { writeTinySource } from "../fixtures/tiny-source.ts";
import { noRedis } from "../redis.ts";
import { cleanUpQueues, differingTables, silent, stagingFolders, TEST_REDIS } from "./jobs-fixture.ts";
import { TOY_NAMES, toyRuns } from "./whole-step-toys.ts";

vi.mock("../../pipeline/run/plan.ts", async (original) => {
  const plan = await original<typeof import("../../pipeline/run/plan.ts")>();
  const { TOY_NAMES, TOY_STAGES, withToySteps } = await import("./whole-step-toys.ts");
  const full = withToySteps(plan.buildRunPlan("full").steps);
  const stages = { ...plan.KIND_STAGES.full, ...TOY_STAGES };
  return {
    ...plan,
    WHOLE_STEPS: [...plan.WHOLE_STEPS.filter((s) => s !== "publish"), ...TOY_NAMES, "publish"],
    // a partitioned step after a step of the publish job's (not in any plan: the flow refuses such a plan)
    PARTITIONED_STEPS: {
      ...plan.PARTITIONED_STEPS,
      toyParts: { ...plan.PARTITIONED_STEPS.analytics, after: "toyMetrics" },
    },
    buildRunPlan: (kind: string) =>
      kind === "full" || kind === "backfill" ? { kind, steps: full } : plan.buildRunPlan(kind as "append"),
    KIND_STAGES: { ...plan.KIND_STAGES, full: stages, backfill: stages },
  };
});

const prefixBase = `test-whole-steps-${process.pid}-${Date.now()}`;
const workers: Worker[] = [];
afterAll(() => cleanUpQueues(prefixBase, workers));

/** The toy tables of a snapshot, row by row. */
async function toyTables(dir: string) {
  const db = await openDuck();
  try {
    const read = async (t: string) =>
      (await rows(db.conn, "select * from read_parquet($f)", { f: join(dir, `${t}.parquet`) })).map((r) =>
        Object.fromEntries(Object.entries(r).map(([k, v]) => [k, typeof v === "bigint" ? Number(v) : v])),
      );
    const metrics = await rows(db.conn, "select count(*) as n from read_parquet($f)", {
      f: join(dir, "stock_metrics", "*.parquet"),
    });
    return {
      toy_counts: await read("toy_counts"),
      toy_doubled: await read("toy_doubled"),
      toy_fundamentals: await read("toy_fundamentals"),
      toy_metrics: await read("toy_metrics"),
      toy_last: await read("toy_last"),
      stockMetricRows: Number(metrics[0]!.n),
    };
  } finally {
    db.close();
  }
}

describe("a whole step added to the plan alone", () => {
  it("is a step job after one whole step run as a job, else run by the publish job in plan order", () => {
    // the real plan's own: the rating evidence after ingest (pipeline/stages/evidence.ts)
    expect(wholeStepPlacement()).toEqual({
      jobs: [
        { step: "evidence", addedBy: "ingest" },
        { step: "toyCounts", addedBy: "ingest" },
        { step: "toyDoubled", addedBy: "toyCounts" },
        { step: "toyFundamentals", addedBy: "fundamentals" },
      ],
      inPublish: ["merge", "toyMetrics", "toyLast"],
    });
    expect(stepJobsAfter("ingest")).toEqual(["evidence", "toyCounts"]);
    expect(stepJobsAfter("toyCounts" as never)).toEqual(["toyDoubled"]);
    expect(stepJobsAfter("fundamentals")).toEqual(["toyFundamentals"]);
    expect(stepJobsAfter("toyDoubled" as never)).toEqual([]);
    const stranded = [
      ...buildRunPlan("full").steps,
      { name: "toyParts", after: ["toyMetrics"] } as unknown as PlanStep,
    ];
    const e = (() => {
      try {
        wholeStepPlacement({ kind: "full", steps: stranded });
      } catch (err) {
        return err;
      }
    })();
    expect(e).toBeInstanceOf(FlowPlanError);
    expect((e as FlowPlanError).code).toBe("FLOW_PLAN");
    expect((e as Error).message).toMatch(/^toyParts follow a whole step the flow runs in its publish job/);
  });

  it.skipIf(noRedis)(
    "runs inline and as a flow on two workers, a failed step job retried, with the same tables",
    async () => {
      const source = writeTinySource();
      const inlineStore = mkdtempSync(join(tmpdir(), "whole-steps-inline-"));
      const { meta } = await runPipeline({
        dataDir: inlineStore,
        sourceDir: source,
        catalog: await Catalog.open(join(inlineStore, "catalog.duckdb")),
        log: silent,
      });
      expect([...toyRuns.calls].sort()).toEqual([...TOY_NAMES].sort());
      const inline = snapshotDir(inlineStore, meta.id);
      const tables = await toyTables(inline);
      expect(tables).toEqual({
        toy_counts: [{ companies: 4 }],
        toy_doubled: [{ twice: 8 }],
        toy_fundamentals: [{ after: "split" }],
        toy_metrics: [{ n: tables.stockMetricRows }],
        toy_last: [{ more: tables.stockMetricRows + 1 }],
        stockMetricRows: tables.stockMetricRows,
      });
      expect(tables.stockMetricRows).toBeGreaterThan(0);

      toyRuns.calls.length = 0;
      toyRuns.failOnce.add("toyDoubled");
      const dataDir = mkdtempSync(join(tmpdir(), "whole-steps-flow-"));
      const catalog = await Catalog.open(join(dataDir, "catalog.duckdb"));
      const prefix = `${prefixBase}-flow`;
      const completed: string[] = [];
      for (let k = 0; k < 2; k++) {
        const w = startPipelineWorker({ redisUrl: TEST_REDIS, dataDir, catalog, log: silent, prefix });
        w.on("completed", (job) => completed.push(job.id!));
        workers.push(w);
      }
      const r = await dispatchRun({
        dataDir,
        sourceDir: source,
        catalog,
        log: silent,
        redisUrl: TEST_REDIS,
        prefix,
        flow: true,
        timeoutMs: 60_000,
      });
      const flow = snapshotDir(dataDir, r.snapshotId);
      expect(await differingTables(inline, flow)).toEqual([]);
      expect(await toyTables(flow)).toEqual(tables);
      // toyDoubled twice: its job failed once after writing its table, and its retry wrote it again
      expect([...toyRuns.calls].sort()).toEqual([...TOY_NAMES, "toyDoubled"].sort());
      const ids = runFlowIds(sourceStamp(source));
      expect(completed.filter((j) => j.startsWith("step.")).sort()).toEqual(
        (["evidence", "toyCounts", "toyDoubled", "toyFundamentals"] as never[]).map((s) => ids.step(s)).sort(),
      );
      expect(stagingFolders(dataDir)).toEqual([]);
    },
    90_000,
  );
});
