// No lost update between a run and a rebalance: a run reads the user portfolios once, early; a
// rebalance published after that moment may carry a definition the run never saw. After the run
// publishes, each such portfolio is rebalanced again on the run's snapshot, from the catalog as it
// is now.
import type { Log } from "../../pipeline/stages/context.ts";
import type { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { type Manifest, publishedSince } from "../../pipeline/store/snapshot/snapshots.ts";
import { runRebalance } from "./rebalance-run.ts";

export async function reapplyMissedRebalances(
  opts: { dataDir: string; catalog: Catalog; log: Log; job?: string },
  sinceVersion: number,
  published: Manifest,
): Promise<string[]> {
  const ids = [
    ...new Set(
      publishedSince(published, sinceVersion)
        .filter((e) => e.kind === "rebalance" && e.version < (published.version ?? 0) && e.portfolio)
        .map((e) => e.portfolio!),
    ),
  ];
  if (!ids.length) return ids;
  await opts.catalog.refresh();
  for (const id of ids) {
    try {
      // in this process: the run's job publishes its re-applies before it ends
      await runRebalance(opts, id, opts.job);
    } catch (e) {
      // The run itself is published; a portfolio that fails here keeps the run's version of it.
      opts.log.warn(
        { portfolio: id, err: String((e as Error).message) },
        "re-applying a rebalance that raced the run failed",
      );
    }
  }
  opts.log.info({ portfolios: ids }, "re-applied rebalances published while the run computed");
  return ids;
}
