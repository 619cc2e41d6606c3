// The worker's processor of each job name. A name of jobs/queue/contracts.ts without a processor here is
// a type error (ProcessorTable). The jobs of the plan's partitioned steps (pipeline/run/plan.ts) share
// one processor (partition.ts), and so do its whole steps without a job kind of their own (step.ts); a
// backtest is left a while to the worker holding its run's universe.
import { inFlow } from "../flow-worker.ts";
import { processBackfill } from "./backfill.ts";
import { backtestStep, leaveToAffinity } from "./backtest.ts";
import { fundamentalsStep } from "./fundamentals.ts";
import { ingestStep } from "./ingest.ts";
import { partitionProcessors } from "./partition.ts";
import { publishStep } from "./publish.ts";
import { processRebalance } from "./rebalance.ts";
import { processRun } from "./run.ts";
import { wholeStepJob } from "./step.ts";
import type { ProcessorTable } from "./types.ts";

export const PROCESSORS: ProcessorTable = {
  run: processRun,
  backfill: processBackfill,
  rebalance: processRebalance,
  publish: inFlow("publish", publishStep),
  ingest: inFlow("ingest", ingestStep),
  fundamentals: inFlow("fundamentals", fundamentalsStep),
  step: inFlow("step", wholeStepJob),
  ...partitionProcessors(),
  backtest: inFlow("backtest", backtestStep, { leave: leaveToAffinity, usesUniverse: true }),
};
