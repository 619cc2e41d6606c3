// The worker's processor of each job name. A name of jobs/contracts.ts without a processor here is
// a type error (ProcessorTable), so adding a job kind touches the contracts and its processor file.
import { inFlow } from "../flow-worker.ts";
import { analyticsStep } from "./analytics.ts";
import { processBackfill } from "./backfill.ts";
import { backtestStep, leaveToAffinity } from "./backtest.ts";
import { financialsStep } from "./financials.ts";
import { fundamentalsStep } from "./fundamentals.ts";
import { ingestStep } from "./ingest.ts";
import { publishStep } from "./publish.ts";
import { processRebalance } from "./rebalance.ts";
import { processRun } from "./run.ts";
import type { ProcessorTable } from "./types.ts";

export const PROCESSORS: ProcessorTable = {
  run: processRun,
  backfill: processBackfill,
  rebalance: processRebalance,
  publish: inFlow("publish", publishStep),
  ingest: inFlow("ingest", ingestStep),
  fundamentals: inFlow("fundamentals", fundamentalsStep),
  financials: inFlow("financials", financialsStep),
  analytics: inFlow("analytics", analyticsStep),
  backtest: inFlow("backtest", backtestStep, { leave: leaveToAffinity, usesUniverse: true }),
};
