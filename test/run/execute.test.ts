// The plan executor (pipeline/run/execute.ts): each step after the steps it waits for, side by side
// where the plan allows, the publish left to the caller, and a failure reported after the steps
// already running have ended.
import { describe, expect, it } from "vitest";
import { executeSteps } from "../../pipeline/run/execute.ts";
import { buildRunPlan } from "../../pipeline/run/plan.ts";

const tick = () => new Promise((r) => setTimeout(r, 5));

describe("the plan executor", () => {
  it("runs each step once, after the steps it waits for, and leaves the publish to the caller", async () => {
    const log: string[] = [];
    const stage = (name: string) => async (s: string[]) => {
      s.push(`${name}:start`);
      await tick();
      s.push(`${name}:end`);
    };
    const plan = buildRunPlan("append"); // ingest; analytics and backtest after it; publish
    await executeSteps(
      plan,
      { ingest: stage("ingest"), analytics: stage("analytics"), backtest: stage("backtest") },
      log,
    );
    expect(log.slice(0, 2)).toEqual(["ingest:start", "ingest:end"]);
    // side by side: both start before either ends
    expect(log.slice(2, 4).sort()).toEqual(["analytics:start", "backtest:start"]);
    expect(log.slice(4).sort()).toEqual(["analytics:end", "backtest:end"]);
  });

  it("refuses a plan step without a stage function", async () => {
    await expect(executeSteps(buildRunPlan("rebalance"), {}, null)).rejects.toThrow(/backtest has no stage function/);
  });

  it("on a failure, lets the steps already running end, runs none after it, and throws its error", async () => {
    const log: string[] = [];
    const failing = executeSteps(
      buildRunPlan("full"),
      {
        ingest: async () => {
          await tick();
          throw new Error("bad source");
        },
        fundamentals: async () => {
          await tick();
          await tick();
          log.push("fundamentals ended");
        },
        financials: async () => void log.push("financials"),
        analytics: async () => void log.push("analytics"),
        backtest: async () => void log.push("backtest"),
        merge: async () => void log.push("merge"),
        evidence: async () => void log.push("evidence"),
      },
      null,
    );
    await expect(failing).rejects.toThrow("bad source");
    // the fundamentals ran to their end before the error came out; nothing after ingest ran
    expect(log).toEqual(["fundamentals ended", "financials"]);
  });
});
