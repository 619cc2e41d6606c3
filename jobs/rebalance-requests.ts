// The API's requestRebalance port: a user portfolio was created, changed or deleted, so recompute
// it on the published snapshot and publish (pipeline/stages/rebalance.ts). In-process without
// Redis: one rebalance at a time in this process, requests for the same portfolio coalesced.
// With Redis: a `rebalance` job on the pipeline queue, taken by any worker.
import type { Queue } from "bullmq";
import type { Log } from "../pipeline/stages/context.ts";
import { rebalanceOne } from "../pipeline/stages/rebalance.ts";
import type { Catalog } from "../pipeline/store/catalog/catalog.ts";
import { readManifest } from "../pipeline/store/snapshots.ts";
import { jobId, type RebalanceJobData, versionOf } from "./job-types.ts";
import { JOB_DEFAULTS, pipelineQueue } from "./queue.ts";
import { catalogLookup } from "./reapply.ts";

export interface RebalanceDeps {
  dataDir: string;
  catalog: Catalog;
  log: Log & { error?: (o: object, m: string) => void };
}

/**
 * Recomputes one user portfolio from the catalog's current rules on the snapshot current at publish
 * time; a portfolio no longer in the catalog is dropped from the snapshot. Without a published
 * snapshot there is nothing to build on: the next pipeline run computes every catalog portfolio.
 */
export async function rebalanceFromCatalog(deps: RebalanceDeps, portfolioId: string): Promise<void> {
  if (!readManifest(deps.dataDir)) {
    deps.log.warn(
      { portfolio: portfolioId },
      "no snapshot published yet: the portfolio is computed by the first pipeline run",
    );
    return;
  }
  const lookup = catalogLookup(deps.catalog);
  if (lookup(portfolioId)) await rebalanceOne({ dataDir: deps.dataDir, log: deps.log, portfolioId, lookup });
  else await rebalanceOne({ dataDir: deps.dataDir, log: deps.log, portfolio: null, dropId: portfolioId });
}

/**
 * A rebalance that failed for good: logged with its reason and recorded in the catalog, so the
 * portfolio reads FAILED (not PENDING forever) until its next change or a run that publishes it.
 */
export async function noteRebalanceFailure(
  deps: RebalanceDeps,
  portfolioId: string,
  requestedAt: string | null,
  e: unknown,
): Promise<void> {
  const reason = String((e as Error)?.message ?? e);
  deps.log.warn({ portfolio: portfolioId, err: reason.split("\n")[0] }, "portfolio rebalance failed");
  await deps.catalog
    .recordRebalanceFailure(portfolioId, requestedAt, reason)
    .catch((err: unknown) =>
      deps.log.warn({ portfolio: portfolioId, err: String(err) }, "could not record the failed rebalance"),
    );
}

export interface Rebalancer {
  request(portfolioId: string): void;
  /** Resolves when every request made so far has been handled (tests, shutdown). */
  idle(): Promise<void>;
  close(): Promise<void>;
}

/** One at a time (each publish builds on the one before); a portfolio asked for twice while waiting runs once. */
export function inProcessRebalancer(deps: RebalanceDeps): Rebalancer {
  const waiting = new Set<string>();
  let running: Promise<void> | null = null;
  const drain = async () => {
    while (waiting.size) {
      const [id] = waiting;
      waiting.delete(id);
      const requestedAt = deps.catalog.rebalanceRequestedAt(id);
      try {
        await rebalanceFromCatalog(deps, id);
      } catch (e) {
        await noteRebalanceFailure(deps, id, requestedAt, e);
      }
    }
    running = null;
  };
  return {
    request(id) {
      waiting.add(id);
      running ??= drain();
    },
    async idle() {
      while (running) await running;
    },
    async close() {
      await this.idle();
    },
  };
}

/**
 * Enqueues a `rebalance` job; any pipeline worker takes it (jobs/worker.ts). The job id names the
 * definition and the time of the change (jobs/job-types.ts), so one change requested twice is one job.
 */
export function queueRebalancer(redisUrl: string, catalog: Catalog, log: Log, prefix?: string): Rebalancer {
  let queue: Queue | null = null;
  const pending = new Set<Promise<unknown>>();
  return {
    request(id) {
      queue ??= pipelineQueue(redisUrl, prefix);
      // The change's time is part of the version: A → B → A again must run a third time.
      const requestedAt = catalog.rebalanceRequestedAt(id);
      const definitionVersion = versionOf({
        spec: catalogLookup(catalog)(id) ?? { deleted: id },
        at: requestedAt ?? Date.now(),
      });
      const data: RebalanceJobData = { portfolioId: id, definitionVersion, requestedAt };
      const p = queue
        .add("rebalance", data, { ...JOB_DEFAULTS, jobId: jobId("rebalance", definitionVersion, `portfolio-${id}`) })
        .catch((e: unknown) => log.warn({ portfolio: id, err: String(e) }, "could not enqueue the portfolio rebalance"))
        .finally(() => pending.delete(p));
      pending.add(p);
    },
    async idle() {
      await Promise.all(pending);
    },
    async close() {
      await this.idle();
      await queue?.close();
    },
  };
}
