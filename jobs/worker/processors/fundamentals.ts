// `fundamentals`: splits the fundamentals by ticker range and adds one financials job per range to the parent.
import { mkdirSync } from "node:fs";
import { KIND_STAGES } from "../../../pipeline/run/plan.ts";
import type { StageContext } from "../../../pipeline/stages/context.ts";
import { takeLease } from "../../../pipeline/store/coordination/leases.ts";
import { openDuck } from "../../../pipeline/store/duck/duck.ts";
import { DUCK_MEMORY } from "../../../pipeline/store/duck/duck-memory.ts";
import { readManifest, snapshotDir } from "../../../pipeline/store/snapshot/snapshots.ts";
import { addChildren, type FlowStep, partitionsListed, tickersPerPartition, workerThreads } from "../flow-worker.ts";
import { flowHost } from "./flow-host.ts";

export const fundamentalsStep: FlowStep<"fundamentals"> = async (job, data, f) => {
  const { deps, out } = f;
  if (!job.parent?.id)
    throw new Error(`fundamentals job ${job.id} has no parent: it is added only as part of a run's flow`);
  mkdirSync(out, { recursive: true });
  f.progress("fundamentals: splitting by ticker range", 0, 1);
  const base = readManifest(deps.dataDir);
  const lease = base ? takeLease(deps.dataDir, base.snapshotId) : null;
  const db = await openDuck(":memory:", {
    threads: String(workerThreads()),
    memory_limit: DUCK_MEMORY.fundamentalsSplit,
  });
  try {
    const ctx: StageContext = {
      conn: db.conn,
      out,
      catalog: deps.catalog,
      log: deps.log,
      published: base ? snapshotDir(deps.dataDir, base.snapshotId) : undefined,
      tickersPerPartition: tickersPerPartition(),
    };
    await KIND_STAGES.full.fundamentals(flowHost(ctx, data.sourceDir));
  } finally {
    lease?.stop();
    db.close();
  }
  f.signal?.throwIfAborted();
  const partitions = partitionsListed(out, "fundamentals");
  await addChildren(job, data, f, { partitions });
  const parts = partitions.financials?.length ?? 0;
  deps.log.info(
    { job: job.id, partitions: parts },
    parts
      ? "fundamentals split; financials jobs added"
      : "fundamentals unchanged: financial tables reused from the published snapshot",
  );
  return { done: job.id! };
};
