// `fundamentals`: splits the fundamentals by ticker range and adds one financials job per range to the parent.
import { mkdirSync } from "node:fs";
import { flowFundamentalsStep } from "../../../pipeline/stages/flow-steps.ts";
import { takeLease } from "../../../pipeline/store/coordination/leases.ts";
import { openDuck } from "../../../pipeline/store/duck/duck.ts";
import { DUCK_MEMORY } from "../../../pipeline/store/duck/duck-memory.ts";
import { readManifest, snapshotDir } from "../../../pipeline/store/snapshot/snapshots.ts";
import { addChildren, type FlowStep, partitionsListed, tickersPerPartition, workerThreads } from "../flow-worker.ts";

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
  let parts: number;
  try {
    parts = await flowFundamentalsStep(
      {
        conn: db.conn,
        out,
        published: base ? snapshotDir(deps.dataDir, base.snapshotId) : undefined,
        tickersPerPartition: tickersPerPartition(),
      },
      data.sourceDir,
    );
  } finally {
    lease?.stop();
    db.close();
  }
  f.signal?.throwIfAborted();
  await addChildren(job, data, f, { partitions: partitionsListed(out, "fundamentals") });
  deps.log.info(
    { job: job.id, partitions: parts },
    parts
      ? "fundamentals split; financials jobs added"
      : "fundamentals unchanged: financial tables reused from the published snapshot",
  );
  return { done: job.id! };
};
