// What dispatch.ts and dispatch-queue.ts share, apart from both: the queued path is loaded lazily by
// dispatch.ts and must not import it back.
import type { DateWindow } from "../../pipeline/stages/backfill.ts";
import type { Log } from "../../pipeline/stages/context.ts";
import type { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import type { JobResult } from "./job-types.ts";

export interface DispatchOptions {
  dataDir: string;
  sourceDir: string;
  catalog: Catalog;
  log: Log;
  redisUrl: string | null;
  prefix?: string;
  progress?: (stage: string, done: number, total: number) => void;
  /** Situation lines while waiting on a queue (no worker, Redis away, retrying). */
  note?: (line: string) => void;
  window?: DateWindow;
  /** How long the enqueuing command waits for a queued job (default 1 h). */
  timeoutMs?: number;
  /** Recompute even when the published snapshot already holds this source (or this backfill). */
  force?: boolean;
  /** A queued run as a flow of partition jobs (default, unless PIPELINE_FLOW=0), or as one `run` job. */
  flow?: boolean;
  /** In process: the webhook events step after the publish (jobs/webhooks/event-sink.ts). */
  events?: { published(version?: number): Promise<void> };
}

export interface DispatchResult extends JobResult {
  /** The published snapshot already held this source: nothing was computed. */
  skipped?: boolean;
}

/** One portfolio to recompute (jobs/queue/rebalance-requests.ts). */
export interface RebalanceDispatch {
  dataDir: string;
  portfolioId: string;
  catalog: Catalog;
  log: Log;
  redisUrl: string | null;
  prefix?: string;
  note?: (line: string) => void;
  timeoutMs?: number;
}

export const DEFAULT_TIMEOUT_MS = 3_600_000;
