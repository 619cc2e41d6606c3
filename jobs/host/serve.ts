// What one HTTP server process needs: the catalog mirror and the snapshot holder, both kept
// fresh by polling, wired into the API's deps. api/server.ts does the listening (and cluster).

import type { Redis } from "ioredis";
import type pino from "pino";
import type { AppDeps } from "../../api/app.ts";
import { ReaderSource } from "../../api/resources/reader-source.ts";
import { configureExports, warmExports } from "../../api/rest/export.ts";
import { type RunningServer, startServer } from "../../api/server.ts";
import type { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { dropExportCaches } from "../../pipeline/store/read/export-cache.ts";
import { lazyReader, SnapshotHolder } from "../../pipeline/store/read/holder.ts";
import type { SnapshotReader } from "../../pipeline/store/read/snapshot-reader.ts";
import { EmbeddedWebhookStore } from "../../pipeline/store/webhooks/embedded.ts";
import type { Config } from "../config.ts";
import { createAccessLogger } from "../logger.ts";
import { inProcessRebalancer, queueRebalancer, type RebalanceDeps } from "../queue/rebalance-requests.ts";
import type { Closer } from "../shutdown.ts";
import { webhookPort } from "../webhooks/port.ts";
import { webhookStorePath } from "../webhooks/service.ts";
import { queueDashboard } from "./dashboard.ts";
import { logErrorsOncePerOutage, redisBlockBroadcast, requestPathRedis } from "./redis-health.ts";

/** Failed authentications per client address and minute before it gets 429s (key guessing). */
export const AUTH_FAILURES_PER_MINUTE = 20;

/** The deps and, in stop order, what to close once the HTTP server has drained. */
export interface ServeOptions {
  /** The start-up probe found Redis unreachable and said so: no second line for the same outage. */
  redisReportedDown?: boolean;
  /** The webhook events step: an in-process rebalance failed for good is sent as portfolio.failed. */
  events?: RebalanceDeps["events"];
}

export async function makeAppDeps(
  config: Config,
  log: pino.Logger,
  catalog: Catalog,
  opts: ServeOptions = {},
): Promise<{ deps: AppDeps; closers: Closer[] }> {
  configureExports({ maxConcurrent: config.exportMaxConcurrent, cacheMB: config.exportCacheMB });
  const { holder, served } = await servedSnapshots(config, log);
  const catalogPoll = pollCatalog(catalog, log);
  const redis = config.redisUrl ? requestPathRedis(config.redisUrl) : undefined;
  const blocks = redis ? redisBlockBroadcast(redis, "rl:auth-fail:blocked") : undefined;
  const admin = config.redisUrl ? queueDashboard(config.redisUrl, config.queuePrefix) : undefined;
  // While Redis is away the insurance limiter counts per process; one line per outage says so.
  if (redis)
    logErrorsOncePerOutage(redis, log, "rate limits (counting per process meanwhile)", {
      alreadyReported: opts.redisReportedDown,
    });
  // Mutations write the catalog here; a changed portfolio's rebalance goes to the job runner.
  const rebalancer = config.redisUrl
    ? queueRebalancer(config.redisUrl, catalog, log, config.queuePrefix, config.dataDir)
    : inProcessRebalancer({ dataDir: config.dataDir, catalog, log, events: opts.events });
  const deps: AppDeps = {
    snapshot: served,
    catalog,
    catalogWriter: catalog,
    requestRebalance: (id) => rebalancer.request(id),
    logger: log,
    accessLogger: createAccessLogger(log.level),
    rateLimit: { points: config.rateLimitPerMinute, durationSec: 60, redis },
    graphqlCostPerMinute: config.graphqlCostPerMinute,
    responseCacheBytes: config.responseCacheBytes,
    authFailureLimit: { points: AUTH_FAILURES_PER_MINUTE, durationSec: 60, redis, broadcast: blocks },
    trustProxy: config.trustProxy,
    cors: config.corsOrigins ?? undefined,
    admin,
    webhooks: config.webhooksEnabled ? await webhooksOf(config) : undefined,
  };
  const closers: Closer[] = [
    { name: "portfolio rebalances", close: () => rebalancer.close() },
    {
      name: "snapshot and catalog polling",
      close: () => {
        holder.stop();
        clearInterval(catalogPoll);
      },
    },
    ...(redis ? [redisCloser(redis, blocks)] : []),
    ...(admin ? [{ name: "queue dashboard", close: () => admin.queue.close() }] : []),
  ];
  return { deps, closers };
}

/**
 * The published snapshot, loaded now and polled each second, and the API's view of it (one
 * ReaderSource per reader). The lazy reader: a swap opens the new snapshot's small tables
 * (seconds), then one reference moves.
 */
async function servedSnapshots(config: Config, log: pino.Logger) {
  const holder = new SnapshotHolder(
    config.dataDir,
    (e) => log.error({ err: String(e) }, "snapshot load failed; still serving the previous one"),
    lazyReader(),
  );
  const sources = new WeakMap<SnapshotReader, ReaderSource>();
  const served = () => {
    const r = holder.get();
    if (!r) return null;
    let src = sources.get(r);
    if (!src) {
      src = new ReaderSource(r);
      sources.set(r, src);
    }
    return src;
  };
  holder.onSwap((s) => log.info({ snapshot: s.id }, "serving snapshot"));
  holder.onSwap((s) => dropExportCaches(config.dataDir, s.id)); // other snapshots' export files: no longer served
  holder.onSwap(() => void warmExports(served())); // the slowest exports' files, built in the background
  await holder.refresh().catch((e) => log.error({ err: String(e) }, "snapshot load failed"));
  holder.watch(1000);
  return { holder, served };
}

/** Keys and watchlists written by other processes (CLI, other servers) show up within a second. */
const pollCatalog = (catalog: Catalog, log: pino.Logger) =>
  setInterval(
    () => catalog.refresh().catch((e) => log.warn({ err: String(e) }, "catalog refresh failed")),
    1000,
  ).unref();

const webhooksOf = async (config: Config) =>
  webhookPort(await EmbeddedWebhookStore.open(webhookStorePath(config.dataDir)), config.webhooks);

/** quit() waits for a reply a dead Redis never sends; disconnect() does not. */
const redisCloser = (redis: Redis, blocks: { close(): void } | undefined): Closer => ({
  name: "rate-limit Redis",
  close: () => {
    blocks?.close();
    return redis.status === "ready" ? redis.quit() : redis.disconnect();
  },
});

/**
 * Listens on PORT; with WEB_CONCURRENCY > 1 the primary forks that many server processes.
 * close() drains the HTTP server (or its forked processes), then closes what the deps opened here.
 */
export async function serve(
  config: Config,
  log: pino.Logger,
  catalog: () => Promise<Catalog>,
  opts: ServeOptions = {},
): Promise<RunningServer> {
  const closers: Closer[] = [];
  const srv = await startServer({
    port: config.port,
    workers: config.webConcurrency,
    makeDeps: async () => {
      const made = await makeAppDeps(config, log, await catalog(), opts);
      closers.push(...made.closers);
      return made.deps;
    },
  });
  return {
    url: srv.url,
    close: async () => {
      await srv.close();
      for (const c of closers) await c.close();
    },
  };
}
