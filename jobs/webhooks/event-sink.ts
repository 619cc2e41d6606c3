// The events step as the executors call it: after each publish (every executor's publish path:
// the flow's publish job, the in-process runner, a rebalance) and when a rebalance fails for good.
// A process without webhooks passes no sink, and its publishes are handled by the next process
// that runs the step (the step handles every publish after its cursor).
import { setTimeout as sleep } from "node:timers/promises";
import { failedDeliveries, type WatchSource } from "../../pipeline/events/index.ts";
import { readManifest } from "../../pipeline/store/snapshot/snapshots.ts";
import type { WebhookStore } from "../../pipeline/store/webhooks/types.ts";
import type { DeliveryJob } from "./attempt.ts";
import { emitPublishEvents } from "./publish-events.ts";

export interface RebalanceFailureNote {
  portfolioId: string;
  requestedAt: string | null;
  reason: string;
}

export interface EventSink {
  /**
   * The events of every publish not handled yet, their deliveries enqueued; resolves once they are
   * (another process holding the step is waited for). `version`: the publish just made, handled
   * even when no cursor is kept yet.
   */
  published(version?: number): Promise<void>;
  /** portfolio.failed to the owner's webhooks; nothing when the portfolio is gone. */
  rebalanceFailed(note: RebalanceFailureNote): Promise<void>;
}

export interface SinkDeps {
  dataDir: string;
  store: Pick<WebhookStore, "subscribers">;
  watchedBy: WatchSource;
  ownerOf(portfolioId: string): string | null;
  enqueue(jobs: DeliveryJob[]): Promise<unknown>;
  log?: { info(o: object, m: string): void; warn(o: object, m: string): void };
  /** How long `published` waits for another process holding the step (default 120 s). */
  waitMs?: number;
}

export function eventSink(d: SinkDeps): EventSink {
  return {
    async published(version) {
      for (const until = Date.now() + (d.waitMs ?? 120_000); ; ) {
        // another process holds the step: it may have read the manifest before this publish
        const r = await emitPublishEvents(d.dataDir, d, { firstVersion: version });
        if (r !== null) return;
        if (Date.now() > until) throw new Error("webhook events: another process held the events step too long");
        await sleep(100 + Math.random() * 200);
      }
    },
    async rebalanceFailed(note) {
      const ownerId = d.ownerOf(note.portfolioId);
      if (!ownerId) return;
      const subs = await d.store.subscribers(["portfolio.failed"]);
      const jobs = failedDeliveries(
        {
          ...note,
          ownerId,
          failedAt: new Date().toISOString(),
          snapshotId: readManifest(d.dataDir)?.snapshotId ?? null,
        },
        subs,
      );
      if (jobs.length) await d.enqueue(jobs);
      d.log?.info({ portfolio: note.portfolioId, deliveries: jobs.length }, "portfolio.failed enqueued");
    },
  };
}

/**
 * A sink handed to executors made before the webhook store opens (`npm start`'s worker and API):
 * until `set`, nothing is sent, and the events step's cursor has those publishes handled later.
 */
export function deferredSink(): EventSink & { set(s: EventSink): void } {
  let sink: EventSink | null = null;
  return {
    set(s) {
      sink = s;
    },
    published: async (version) => sink?.published(version),
    rebalanceFailed: async (note) => sink?.rebalanceFailed(note),
  };
}

/**
 * The step after a publish whose job must not fail once it published (a retried run or rebalance
 * would publish again): a failure is logged, and the cursor, not moved, has the next step handle it.
 */
export async function afterPublish(
  sink: Pick<EventSink, "published"> | undefined,
  version: number | undefined,
  log: { warn(o: object, m: string): void },
): Promise<void> {
  await sink
    ?.published(version)
    .catch((e: unknown) => log.warn({ err: String(e) }, "webhook events not computed; the next events step will"));
}
