// `run`: every stage of a source on this worker. A scheduled run (no sourceVersion) republishes
// nothing for an unchanged source, and otherwise becomes a flow every worker shares (a nightly
// append too: the flow's ingest job decides).
import type { Job } from "bullmq";
import { publishedHolding } from "../../../pipeline/run/held-source.ts";
import { sourceStamp } from "../../../pipeline/sources/fingerprint.ts";
import type { DateWindow } from "../../../pipeline/stages/backfill.ts";
import { runPipeline } from "../../local/runner.ts";
import type { JobResultOf } from "../../queue/contracts.ts";
import { enqueueIdempotent } from "../../queue/enqueue.ts";
import { addRunFlow, flowByDefault, runFlowIds } from "../../queue/flow.ts";
import type { JobProcessor, ProcessorContext } from "./types.ts";

export const processRun: JobProcessor<"run"> = async (job, data, ctx) => {
  const { deps } = ctx;
  // A scheduled run carries no version: an unchanged nightly source republishes nothing.
  const held = data.sourceVersion ? null : publishedHolding(deps.dataDir, data.sourceDir);
  if (held) return { snapshotId: held, totalMs: 0 };
  // A scheduled run becomes a flow that every worker shares (this job only adds it); a nightly
  // append too (its ingest job decides).
  if (!data.sourceVersion && flowByDefault()) return await startFlow(ctx, data.sourceDir);
  return runWhole(job, data.sourceDir, undefined, ctx);
};

/** The whole pipeline on this worker (a run, or a backfill of `window`). */
export async function runWhole(
  job: Job,
  sourceDir: string,
  window: DateWindow | undefined,
  ctx: ProcessorContext,
): Promise<JobResultOf<"backfill">> {
  const { meta } = await runPipeline({
    dataDir: ctx.deps.dataDir,
    sourceDir,
    window,
    catalog: ctx.deps.catalog,
    log: ctx.deps.log,
    progress: ctx.progress,
    job: job.id,
    signal: ctx.signal,
    events: ctx.deps.events,
  });
  return { snapshotId: meta.id, totalMs: meta.timingsMs.total };
}

/** Adds the run's flow (or joins an equal one queued or running); the flow publishes on its own. */
async function startFlow(ctx: ProcessorContext, sourceDir: string): Promise<{ done: string }> {
  const sourceVersion = sourceStamp(sourceDir);
  const id = runFlowIds(sourceVersion).parent;
  const queue = ctx.queue();
  const enq = await enqueueIdempotent(queue, id, ctx.deps.dataDir, () =>
    addRunFlow(queue, { sourceDir, sourceVersion }),
  );
  ctx.deps.log.info({ flow: id, joined: enq.joined }, "scheduled run enqueued as a flow");
  return { done: `flow ${id}` };
}
