// The in-process executor of a rebalance's plan (pipeline/run/plan.ts): its steps' stage functions
// (KIND_STAGES.rebalance, pipeline/stages/rebalance.ts) run by the plan executor every inline run uses
// (pipeline/run/execute.ts) into a staging folder, then a compare-and-swap publish onto the snapshot
// it read. When another publish moved the manifest meanwhile, the plan runs again on the snapshot
// now current. Every caller comes through jobs/queue/rebalance-requests.ts.
import { executeSteps } from "../../pipeline/run/execute.ts";
import { RunLifecycle } from "../../pipeline/run/lifecycle.ts";
import { buildRunPlan, KIND_STAGES } from "../../pipeline/run/plan.ts";
import type { Log } from "../../pipeline/stages/context.ts";
import {
  type PortfolioSpec,
  type RebalanceOptions,
  rebalanceMeta,
  rebalanceTarget,
} from "../../pipeline/stages/rebalance.ts";
import type { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { openDuck } from "../../pipeline/store/duck/duck.ts";
import {
  ManifestMovedError,
  readManifest,
  readMeta,
  type SnapshotMeta,
  snapshotDir,
} from "../../pipeline/store/snapshot/snapshots.ts";

/** Recomputes (or removes) one portfolio on top of the current snapshot; returns the new snapshot's meta. */
export async function rebalanceOne(opts: RebalanceOptions): Promise<SnapshotMeta> {
  const attempts = opts.attempts ?? 5;
  for (let attempt = 1; ; attempt++) {
    const m = readManifest(opts.dataDir);
    if (!m) throw new Error("no snapshot is published yet: run the pipeline first");
    try {
      return await rebalanceOn(opts, m.snapshotId);
    } catch (e) {
      if (!(e instanceof ManifestMovedError) || attempt >= attempts) throw e;
      opts.log.info(
        { from: e.expected, to: e.actual, attempt },
        "manifest moved during the rebalance; applying it to the current snapshot",
      );
    }
  }
}

/** One attempt: the plan's steps on the snapshot `baseId` (leased meanwhile), published only onto it. */
async function rebalanceOn(opts: RebalanceOptions, baseId: string): Promise<SnapshotMeta> {
  const run = RunLifecycle.open({ dataDir: opts.dataDir, job: opts.job });
  run.leaseSnapshot(baseId);
  const from = snapshotDir(opts.dataDir, baseId);
  const { stagingId: id, out } = run;
  const db = await openDuck();
  try {
    const t0 = performance.now();
    const { pid, portfolio } = await rebalanceTarget(db.conn, from, opts);
    await executeSteps(buildRunPlan("rebalance"), KIND_STAGES.rebalance, { conn: db.conn, from, out, pid, portfolio });
    const meta = rebalanceMeta(readMeta(opts.dataDir, baseId), id, Math.round(performance.now() - t0));
    // No after-publish steps here: the caller's (a rebalance job runs the events step once it is done).
    await run.publish(meta, { kind: "rebalance", portfolio: pid, expect: baseId, baseVersion: 0 });
    opts.log.info(
      { snapshot: id, portfolio: pid, ms: meta.timingsMs.total },
      portfolio ? "portfolio rebalanced" : "portfolio removed",
    );
    return meta;
  } catch (e) {
    run.discard();
    throw e;
  } finally {
    db.close();
    run.close();
  }
}

/** The catalog's definition of a user portfolio, in the shape the backtest takes. */
export function catalogLookup(catalog: Catalog): (id: string) => PortfolioSpec | null {
  return (id) => {
    const u = catalog.userPortfolio(id);
    if (!u) return null;
    const { ownerId, createdAt, ...rules } = u;
    return { rules, ownerId, createdAt };
  };
}

/**
 * Recomputes one portfolio on the snapshot current at publish time: a user portfolio from the
 * catalog's current rules, a predefined one from its published rules; a user portfolio the catalog
 * no longer has is dropped from the snapshot (PortfolioNotFoundError: neither knows it).
 */
export function runRebalance(
  deps: { dataDir: string; catalog: Catalog; log: Log },
  portfolioId: string,
  job?: string,
): Promise<SnapshotMeta> {
  return rebalanceOne({ dataDir: deps.dataDir, log: deps.log, portfolioId, lookup: catalogLookup(deps.catalog), job });
}
