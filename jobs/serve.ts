// What one HTTP server process needs: the catalog mirror and the snapshot holder, both kept
// fresh by polling, wired into the API's deps. api/server.ts does the listening (and cluster).
import type pino from "pino";
import { Redis } from "ioredis";
import type { AppDeps } from "../api/app.ts";
import { startServer, type RunningServer } from "../api/server.ts";
import type { Catalog } from "../pipeline/store/catalog/catalog.ts";
import { SnapshotHolder } from "../pipeline/store/holder.ts";
import type { Config } from "./config.ts";
import { createAccessLogger } from "./logger.ts";
import { inProcessRebalancer, queueRebalancer } from "./rebalance-requests.ts";

export async function makeAppDeps(config: Config, log: pino.Logger, catalog: Catalog): Promise<AppDeps> {
  const holder = new SnapshotHolder(config.dataDir, (e) => log.error({ err: String(e) }, "snapshot load failed; still serving the previous one"));
  holder.onSwap((s) => log.info({ snapshot: s.id }, "serving snapshot"));
  await holder.refresh().catch((e) => log.error({ err: String(e) }, "snapshot load failed"));
  holder.watch(1000);
  // Keys and watchlists written by other processes (CLI, other servers) show up within a second.
  setInterval(() => catalog.refresh().catch((e) => log.warn({ err: String(e) }, "catalog refresh failed")), 1000).unref();
  const redis = config.redisUrl ? new Redis(config.redisUrl, { enableOfflineQueue: false }) : undefined;
  // While Redis is away the insurance limiter counts per process; say so instead of an unhandled event.
  redis?.on("error", (e) => log.warn({ err: String(e) }, "rate-limit Redis unavailable; limiting per process"));
  // Mutations write the catalog here; a changed portfolio's rebalance goes to the job runner.
  const rebalancer = config.redisUrl ? queueRebalancer(config.redisUrl, log) : inProcessRebalancer({ dataDir: config.dataDir, catalog, log });
  return {
    snapshot: () => holder.get(),
    catalog,
    catalogWriter: catalog,
    requestRebalance: (id) => rebalancer.request(id),
    logger: log,
    accessLogger: createAccessLogger(log.level),
    rateLimit: { points: config.rateLimitPerMinute, durationSec: 60, redis },
  };
}

/** Listens on PORT; with WEB_CONCURRENCY > 1 the primary forks that many server processes. */
export function serve(config: Config, log: pino.Logger, catalog: () => Promise<Catalog>): Promise<RunningServer> {
  return startServer({ port: config.port, workers: config.webConcurrency, makeDeps: async () => makeAppDeps(config, log, await catalog()) });
}
