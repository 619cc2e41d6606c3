// `npm start`: the embedded default end to end. Generates the sample source when missing, serves
// at once (healthz 503 until a snapshot is published), runs the pipeline when no snapshot of this
// source is published yet, and prints a demo key. WEB_CONCURRENCY > 1 forks one server process
// per worker; the primary only orchestrates.
import cluster from "node:cluster";
import { join } from "node:path";
import { sourceFingerprint } from "../pipeline/sources/fingerprint.ts";
import { formatReject, SourceRejectedError } from "../pipeline/sources/report.ts";
import { Catalog } from "../pipeline/store/catalog/catalog.ts";
import { ensureDemoUser, ensureDemoWatchlist } from "../pipeline/store/catalog/demo.ts";
import { hasTypedTables, loadSnapshot } from "../pipeline/store/load-snapshot.ts";
import { readManifest, snapshotDir } from "../pipeline/store/snapshots.ts";
import { rebalanceOne } from "../pipeline/stages/rebalance.ts";
import { ConfigError, loadConfig, type Config } from "./config.ts";
import { dispatchRun, JobFailedError } from "./dispatch.ts";
import { createLogger } from "./logger.ts";
import { ensureSampleSource } from "./sample.ts";
import { serve } from "./serve.ts";
import { startPipelineWorker } from "./worker.ts";

async function primary(config: Config): Promise<void> {
  const log = createLogger(config.logLevel);
  const sourceDir = config.sourceDir ?? (await ensureSampleSource(config.sampleDir, log));
  const catalog = await Catalog.open(join(config.dataDir, "catalog.duckdb"));
  const demo = await ensureDemoUser(catalog, config.demoApiKey);

  const { url } = await serve(config, log, async () => catalog);
  // With Redis, this process is also a pipeline worker, so a lone `npm start` never waits forever.
  const worker = config.redisUrl ? startPipelineWorker({ redisUrl: config.redisUrl, dataDir: config.dataDir, catalog, log }) : null;

  const manifest = readManifest(config.dataDir);
  // A snapshot from before the typed tables (metrics and statements as JSON text) is rebuilt too.
  const typed = manifest !== null && hasTypedTables(snapshotDir(config.dataDir, manifest.snapshotId));
  if (manifest?.sourceId !== sourceFingerprint(sourceDir) || !typed) {
    log.info({ sourceDir }, "no snapshot of this source is published yet: running the pipeline");
    try {
      await dispatchRun({ dataDir: config.dataDir, sourceDir, catalog, log, redisUrl: config.redisUrl });
    } catch (e) {
      if (e instanceof SourceRejectedError) {
        log.error({ total: e.total, first: e.rejects.slice(0, 20).map(formatReject) }, "source rejected; nothing was published");
        if (!manifest) throw e;
      } else if (e instanceof JobFailedError) log.error({ err: e.message }, "pipeline job failed; nothing was published");
      else throw e;
    }
  }
  // User portfolios created while no run saw them (e.g. the demo's on a reused store) get theirs now.
  const current = readManifest(config.dataDir);
  if (current) {
    const snap = await loadSnapshot(config.dataDir, current.snapshotId);
    for (const { ownerId, createdAt, ...rules } of catalog.allUserPortfolios()) {
      if (!snap.portfolios.has(rules.id)) await rebalanceOne({ dataDir: config.dataDir, log, portfolio: { rules, ownerId, createdAt } });
    }
    await ensureDemoWatchlist(catalog, demo.user.id, snap.companies);
  }
  if (current) await waitHealthy(url, log);
  const keyLine = demo.key ? `demo API key (every scope): ${demo.key}` : "demo API key: the DEMO_API_KEY you set";
  process.stdout.write(`\nserving ${url}/data/v1\n${keyLine}\ntry: curl '${url}/data/v1/stock_ratings?limit=5&api_key=${demo.key ?? "$DEMO_API_KEY"}'\n\n`);
  const stop = async () => {
    await worker?.close();
    process.exit(0);
  };
  process.once("SIGINT", stop).once("SIGTERM", stop);
}

/** The server processes poll the manifest; announce only once they serve the published snapshot. */
async function waitHealthy(url: string, log: ReturnType<typeof createLogger>): Promise<void> {
  const until = Date.now() + 30_000;
  while (Date.now() < until) {
    const r = await fetch(`${url}/healthz`).catch(() => null);
    if (r?.status === 200) return;
    await new Promise((res) => setTimeout(res, 100));
  }
  log.warn({ url }, "the server did not report healthy within 30 s");
}

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(e.message);
      process.exit(64);
    }
    throw e;
  }
  if (cluster.isPrimary) await primary(config);
  else await serve(config, createLogger(config.logLevel), () => Catalog.open(join(config.dataDir, "catalog.duckdb")));
}

main().catch((e) => {
  console.error(e instanceof Error ? (e.stack ?? e.message) : e);
  process.exit(1);
});
