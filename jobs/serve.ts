// One HTTP server process: the catalog mirror, the snapshot holder and the Express app.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type pino from "pino";
import { createApp } from "../api/app.ts";
import type { Catalog } from "../pipeline/store/catalog/catalog.ts";
import { SnapshotHolder } from "../pipeline/store/holder.ts";
import type { Config } from "./config.ts";
import { Redis } from "ioredis";

export async function serve(config: Config, log: pino.Logger, catalog: Catalog): Promise<{ url: string; close(): Promise<void> }> {
  const holder = new SnapshotHolder(config.dataDir, (e) => log.error({ err: String(e) }, "snapshot load failed; still serving the previous one"));
  holder.onSwap((s) => log.info({ snapshot: s.id }, "serving snapshot"));
  await holder.refresh().catch((e) => log.error({ err: String(e) }, "snapshot load failed"));
  holder.watch(1000);
  // Keys and watchlists written by other processes (CLI, other servers) show up within a second.
  const catalogTimer = setInterval(() => catalog.refresh().catch((e) => log.warn({ err: String(e) }, "catalog refresh failed")), 1000);
  catalogTimer.unref();
  const redis = config.redisUrl ? new Redis(config.redisUrl, { lazyConnect: false, enableOfflineQueue: false }) : undefined;
  const app = createApp({
    snapshot: () => holder.get(),
    catalog,
    logger: log,
    rateLimit: { points: config.rateLimitPerMinute, durationSec: 60, redis },
  });
  const server = createServer(app);
  await new Promise<void>((res) => server.listen(config.port, res));
  const { port } = server.address() as AddressInfo;
  log.info({ port }, "listening");
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      holder.stop();
      clearInterval(catalogTimer);
      redis?.disconnect();
      await new Promise<void>((res) => server.close(() => res()));
    },
  };
}
