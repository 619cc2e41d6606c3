// The run's plan (pipeline/run/plan.ts): each kind of run's steps in an order that respects what
// each waits for, the partitioned steps each whole step lists, and the publish's completeness check
// over a staging folder whose records and part files are written here by hand.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { wholeStepPlacement } from "../../jobs/queue/flow.ts";
import {
  buildRunPlan,
  KIND_STAGES,
  missingPartitions,
  PARTITIONED_NAMES,
  PARTITIONED_STEPS,
  partitionsAfter,
  RUN_KINDS,
} from "../../pipeline/run/plan.ts";
import { stagingLayout, writeStagingRecord } from "../../pipeline/store/snapshot/staging-layout.ts";

const ROOT = resolve(import.meta.dirname, "../..");

describe("the run's plan", () => {
  it("lists each kind's steps after the steps they wait for, each once", () => {
    for (const kind of RUN_KINDS) {
      const names = buildRunPlan(kind).steps.map((s) => s.name);
      expect(new Set(names).size, kind).toBe(names.length);
      buildRunPlan(kind).steps.forEach((s, k) => {
        for (const a of s.after) expect(names.slice(0, k), `${kind}: ${s.name} after ${a}`).toContain(a);
      });
      expect(names.at(-1), kind).toBe("publish");
    }
    expect(buildRunPlan("rebalance").steps.map((s) => s.name)).toEqual(["backtest", "publish"]);
  });

  it("declares one stage function for every step of every kind but the publish", () => {
    for (const kind of RUN_KINDS) {
      const steps = buildRunPlan(kind)
        .steps.map((s) => s.name)
        .filter((n) => n !== "publish");
      const stages: Record<string, unknown> = KIND_STAGES[kind];
      for (const n of steps) expect(typeof stages[n], `${kind}: ${n}`).toBe("function");
      expect(Object.hasOwn(stages, "publish"), kind).toBe(false); // the executor's own
    }
    // a partitioned step computes one partition on any executor
    for (const n of PARTITIONED_NAMES) expect(typeof PARTITIONED_STEPS[n].run, n).toBe("function");
  });

  it("is the only place a full run's whole steps are bound: the executors call the plan's table", () => {
    // The stage functions behind the whole steps (pipeline/run/run-steps.ts) and what they call.
    const bound =
      /\b(flowIngestStep|flowFundamentalsStep|flowMergeStep|backtestsInline|runIngest|runFundamentals|runMerge)\(/;
    const executors = [
      "jobs/local/runner.ts",
      ...readdirSync(join(ROOT, "jobs/worker/processors")).map((f) => `jobs/worker/processors/${f}`),
    ];
    for (const f of executors) {
      const src = readFileSync(join(ROOT, f), "utf8").replace(/^\s*(\/\/|\*).*$/gm, "");
      expect(src.match(bound)?.[0] ?? null, f).toBeNull();
    }
  });

  it("fans out the backtests and stock metrics after ingest, the financials after the fundamentals", () => {
    const full = buildRunPlan("full");
    expect(partitionsAfter(full, "ingest")).toEqual(["backtest", "analytics"]);
    expect(partitionsAfter(full, "fundamentals")).toEqual(["financials"]);
    expect(partitionsAfter(buildRunPlan("append"), "fundamentals")).toEqual([]);
  });

  it("has the flow run a whole step as a step job only after exactly one whole step run as a job", () => {
    // the merge waits for the backtests (partitions): the publish job runs it, in the generic path;
    // the rating evidence waits for ingest alone: a step job ingest's job adds
    expect(wholeStepPlacement(buildRunPlan("full"))).toEqual({
      jobs: [{ step: "evidence", addedBy: "ingest" }],
      inPublish: ["merge"],
    });
    const placed = (after: ("ingest" | "fundamentals")[]) =>
      wholeStepPlacement({
        kind: "full",
        steps: [
          { name: "ingest", after: [] },
          { name: "fundamentals", after: [] },
          { name: "merge", after },
          { name: "publish", after: ["merge"] },
        ],
      });
    expect(placed(["ingest"])).toEqual({ jobs: [{ step: "merge", addedBy: "ingest" }], inPublish: [] });
    expect(placed(["fundamentals"])).toEqual({ jobs: [{ step: "merge", addedBy: "fundamentals" }], inPublish: [] });
    // no sibling waits for another: a step waiting for two steps, or for none, runs in the publish job
    expect(placed(["ingest", "fundamentals"])).toEqual({ jobs: [], inPublish: ["merge"] });
    expect(placed([])).toEqual({ jobs: [], inPublish: ["merge"] });
  });

  it("counts the partitions whose output is not whole, per step", () => {
    const out = mkdtempSync(join(tmpdir(), "plan-missing-"));
    const layout = stagingLayout(out);
    mkdirSync(layout.flowDir, { recursive: true });
    const range = (part: number) => ({ part, from: null, to: null });
    writeStagingRecord("plan", layout.plan, {
      counts: { companies: 2, priceDates: 3, ratings: 0, benchmarks: 0 },
      lastPriceDate: "2024-01-03",
      ranges: [range(0), range(1)],
      portfolioIds: ["p1"],
      portfolios: [],
    });
    writeStagingRecord("financials", layout.financials, { parts: 1 });
    // one of two stock metric parts; no financials part; no backtest part
    mkdirSync(join(out, "stock_metrics"));
    writeFileSync(join(out, "stock_metrics", "part-0000.parquet"), "");
    const full = buildRunPlan("full");
    expect(missingPartitions(full, out)).toEqual([
      { step: "backtest", missing: 1, of: 1 },
      { step: "analytics", missing: 1, of: 2 },
      { step: "financials", missing: 1, of: 1 },
    ]);
    expect(missingPartitions(full, out, ["backtest"]).map((m) => m.step)).toEqual(["analytics", "financials"]);
    writeFileSync(join(out, "stock_metrics", "part-0001.parquet"), "");
    expect(missingPartitions(full, out, ["backtest", "financials"])).toEqual([]);
  });
});
