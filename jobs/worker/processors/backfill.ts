// `backfill`: the source replaces one date window of the published history (one job, one worker).
import { runWhole } from "./run.ts";
import type { JobProcessor } from "./types.ts";

export const processBackfill: JobProcessor<"backfill"> = (job, data, ctx) =>
  runWhole(job, data.sourceDir, data.window, ctx);
