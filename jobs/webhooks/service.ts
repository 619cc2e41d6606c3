// Webhooks in a process: the store (DATA_DIR/webhooks.duckdb), the events step (event-sink.ts) that the
// executors run after each publish, and delivery — BullMQ's `webhooks` queue with a worker here
// when REDIS_URL is set, else (npm start only) the in-process queue journaled in
// DATA_DIR/webhooks/queue.jsonl, so a restart resumes. `npm start` also polls the manifest for
// publishes no executor's step handled (a CLI run without Redis or webhooks): the step's cursor
// makes that the same once-per-publish computation, not a second one.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Queue, Worker } from "bullmq";
import type pino from "pino";
import type { WatchSource } from "../../pipeline/events/index.ts";
import type { CatalogReader } from "../../pipeline/store/catalog/types.ts";

type WebhookCatalog = Pick<CatalogReader, "watchlistsOf" | "userPortfolio"> & { refresh?(): Promise<unknown> };

import { readManifest } from "../../pipeline/store/snapshot/snapshots.ts";
import { EmbeddedWebhookStore } from "../../pipeline/store/webhooks/embedded.ts";
import type { Config } from "../config.ts";
import type { Closer } from "../shutdown.ts";
import { addDeliveries, webhookQueue, webhookWorker } from "./bull.ts";
import { deliveryDeps } from "./deps.ts";
import { type EventSink, eventSink } from "./event-sink.ts";
import { LocalDeliveryQueue } from "./local-queue.ts";
import { emitPublishEvents, ensureCursor, webhooksDir } from "./publish-events.ts";

export const webhookStorePath = (dataDir: string) => join(dataDir, "webhooks.duckdb");

/** The subscribers' watchlists from the catalog (its reads are served from memory). */
export function catalogWatches(catalog: Omit<WebhookCatalog, "userPortfolio">): WatchSource {
  return async (userIds) => {
    await catalog.refresh?.();
    return userIds.flatMap((userId) =>
      catalog.watchlistsOf(userId).flatMap((w) => w.tickers.map((ticker) => ({ userId, watchlistId: w.id, ticker }))),
    );
  };
}

/** The events step of a process whose deliveries go to `enqueue`. */
export function sinkOf(
  dataDir: string,
  store: EmbeddedWebhookStore,
  catalog: WebhookCatalog,
  enqueue: Parameters<typeof eventSink>[0]["enqueue"],
  log: pino.Logger,
): EventSink {
  const ownerOf = (id: string) => catalog.userPortfolio(id)?.ownerId ?? null;
  return eventSink({ dataDir, store, watchedBy: catalogWatches(catalog), ownerOf, enqueue, log });
}

/**
 * Webhooks in a `pipeline -- worker` process: the store, the Redis `webhooks` queue and a delivery
 * worker on it, and the events step its pipeline jobs run after each publish.
 */
export async function workerWebhooks(opts: {
  config: Config & { redisUrl: string };
  catalog: WebhookCatalog;
  log: pino.Logger;
}): Promise<{ sink: EventSink; closers: Closer[] }> {
  const { config, log } = opts;
  // before this worker can publish: its publishes are then after the cursor, whoever steps first
  await ensureCursor(config.dataDir);
  const store = await EmbeddedWebhookStore.open(webhookStorePath(config.dataDir));
  const deps = deliveryDeps(store, config.webhooks, {
    onError: (e) => log.warn({ err: String(e) }, "webhook outcomes not recorded"),
  });
  const queue = webhookQueue(config.redisUrl, config.queuePrefix);
  const worker = webhookWorker(config.redisUrl, deps, config.queuePrefix);
  const enqueue = (jobs: Parameters<typeof addDeliveries>[1]) => addDeliveries(queue, jobs, config.webhooks.attempts);
  return {
    sink: sinkOf(config.dataDir, store, opts.catalog, enqueue, log),
    closers: [
      { name: "webhook queue", close: () => worker.close().then(() => queue.close()) },
      { name: "webhook outcomes", close: () => deps.recorder.flush() },
    ],
  };
}

export async function startWebhooks(opts: {
  config: Config;
  catalog: WebhookCatalog;
  log: pino.Logger;
  /** Use Redis (REDIS_URL set and answering). */
  redis: boolean;
  pollMs?: number;
}): Promise<{ store: EmbeddedWebhookStore; sink: EventSink; closers: Closer[] }> {
  const { config, log } = opts;
  await ensureCursor(config.dataDir); // as in workerWebhooks
  const store = await EmbeddedWebhookStore.open(webhookStorePath(config.dataDir));
  const deps = deliveryDeps(store, config.webhooks, {
    onError: (e) => log.warn({ err: String(e) }, "webhook outcomes not recorded"),
  });
  let enqueue: (jobs: Parameters<typeof addDeliveries>[1]) => Promise<unknown>;
  const closers: Closer[] = [];
  if (opts.redis && config.redisUrl) {
    const queue: Queue = webhookQueue(config.redisUrl, config.queuePrefix);
    const worker: Worker | null = config.startWorker ? webhookWorker(config.redisUrl, deps, config.queuePrefix) : null;
    enqueue = (jobs) => addDeliveries(queue, jobs, config.webhooks.attempts);
    closers.push({
      name: "webhook queue",
      close: async () => {
        await worker?.close();
        await queue.close();
      },
    });
  } else {
    mkdirSync(webhooksDir(config.dataDir), { recursive: true });
    const local = await LocalDeliveryQueue.open(join(webhooksDir(config.dataDir), "queue.jsonl"), deps);
    enqueue = (jobs) => local.add(jobs);
    closers.push({ name: "webhook queue", close: () => local.close() });
  }
  const watchedBy = catalogWatches(opts.catalog);
  let seen = readManifest(config.dataDir)?.version ?? 0;
  let busy = false;
  const poll = setInterval(async () => {
    const v = readManifest(config.dataDir)?.version ?? 0;
    if (busy || v === seen) return;
    busy = true;
    try {
      if ((await emitPublishEvents(config.dataDir, { store, watchedBy, enqueue, log })) !== null) seen = v;
    } catch (e) {
      log.error({ err: String(e) }, "webhook events failed; retried at the next poll");
    } finally {
      busy = false;
    }
  }, opts.pollMs ?? 1000).unref();
  // the cursor starts at the published version, so what was published before is not sent again
  await emitPublishEvents(config.dataDir, { store, watchedBy, enqueue, log }).catch(() => undefined);
  closers.unshift({ name: "webhook events", close: () => clearInterval(poll) });
  closers.push({ name: "webhook outcomes", close: () => deps.recorder.flush() });
  return { store, sink: sinkOf(config.dataDir, store, opts.catalog, enqueue, log), closers };
}
