// The nightly append's `analytics` step (append.ts says the whole): a new day changes every stock's
// full-period metric tables, so they are recomputed from the published returns plus the new ones,
// one partition job per published returns part.
import { type AppendRecord, type AppendRun, readAppendRecord } from "./append.ts";
import type { MetricsJob } from "./metrics-partition.ts";
import { type PartitionJob, runPartitionsInline } from "./partition-jobs.ts";
import type { TickerRange } from "./partitions.ts";

/**
 * The append's `analytics` step: every stock's full-period metric tables, from the published
 * returns plus the new ones, one partition job per published part.
 */
export async function appendMetrics(r: AppendRun): Promise<void> {
  const t0 = performance.now();
  const { ctx } = r;
  const record = readAppendRecord(ctx.out);
  const jobs: PartitionJob[] = record.returns.ranges.map((range) => ({
    stage: "metrics",
    data: appendMetricsJob(ctx.out, record, range),
  }));
  r.partitions = jobs.length;
  const run = ctx.runPartitions ?? runPartitionsInline;
  await run(jobs, (d) => ctx.progress?.("metrics", d, jobs.length));
  r.timings.metrics = Math.round(performance.now() - t0);
}

/** One metric partition of an append: its range's published returns part, then the appended days. */
export function appendMetricsJob(out: string, record: AppendRecord, range: TickerRange): MetricsJob {
  const k = record.returns.ranges.findIndex((r) => r.part === range.part);
  if (k < 0) throw new Error(`the append in ${out} has no ticker-range part ${range.part}`);
  return { out, range, returns: [record.returns.parts[k], record.returns.days] };
}
