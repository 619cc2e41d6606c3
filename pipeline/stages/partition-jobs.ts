// The partitioned stages by name: what a worker thread (or a queue job) runs for one partition.
import { type FinancialsJob, financialsPartition } from "./financials-partition.ts";
import { LevelsCache, type MetricsJob, metricsPartition } from "./metrics-partition.ts";

export type PartitionJob = { stage: "metrics"; data: MetricsJob } | { stage: "financials"; data: FinancialsJob };

export type PartitionResult<J extends PartitionJob> = J extends { stage: "metrics" }
  ? Awaited<ReturnType<typeof metricsPartition>>
  : Awaited<ReturnType<typeof financialsPartition>>;

/** What the host running partitions keeps between them (a thread's, a worker process's). */
export interface PartitionState {
  levels?: LevelsCache;
}

export async function runPartitionJob(job: PartitionJob, state: PartitionState = {}): Promise<unknown> {
  switch (job.stage) {
    case "metrics":
      return metricsPartition(job.data, state.levels);
    case "financials":
      return financialsPartition(job.data);
  }
}

/** Runs jobs one after another in this thread (the default when no pool is given). */
export async function runPartitionsInline<R>(jobs: PartitionJob[], onDone?: (done: number) => void): Promise<R[]> {
  const out: R[] = [];
  const state = { levels: new LevelsCache() }; // these jobs' (one run's): read once
  for (const j of jobs) {
    out.push((await runPartitionJob(j, state)) as R);
    onDone?.(out.length);
  }
  return out;
}
