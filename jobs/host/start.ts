// `npm start`: the embedded default end to end. Checks the store folder and Redis, serves at once
// (healthz 503 until a snapshot is published), publishes the source when no snapshot of it is
// published yet (jobs/host/start-plan.ts: never another source's snapshot without SOURCE_DIR). The
// banner (URL, demo key) comes as soon as the server listens; "serving URL (snapshot …)" once
// /healthz serves the published snapshot. WEB_CONCURRENCY > 1 forks one server process per worker; the primary only
// orchestrates. SIGTERM/SIGINT drain requests, close the queue worker, Redis and the catalog, exit 0.
import cluster from "node:cluster";
import { formatReject, SourceRejectedError } from "../../pipeline/sources/report.ts";
import { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { ensureDemoUser, ensureDemoWatchlist } from "../../pipeline/store/catalog/demo.ts";
import { hasTypedTables } from "../../pipeline/store/read/load-snapshot.ts";
import { publishedCompanies } from "../../pipeline/store/read/published-portfolios.ts";
import { type Manifest, readManifest, readMeta, snapshotDir } from "../../pipeline/store/snapshot/snapshots.ts";
import { type Config, ConfigError, loadConfig } from "../config.ts";
import { createLogger } from "../logger.ts";
import { dispatchRun, JobFailedError } from "../queue/dispatch.ts";
import {
  inProcessRebalancer,
  portfoliosWithoutBacktest,
  queueRebalancer,
  requestAll,
} from "../queue/rebalance-requests.ts";
import { type Closer, onShutdown } from "../shutdown.ts";
import { deferredSink } from "../webhooks/event-sink.ts";
import { startWebhooks } from "../webhooks/service.ts";
import { startPipelineWorker } from "../worker/worker.ts";
import { readyLine, startBanner } from "./banner.ts";
import { existingSourceDir } from "./cli-args.ts";
import { type TerminalProgress, terminalProgress } from "./progress.ts";
import { logErrorsOncePerOutage, probeRedis, redisUrlForLog } from "./redis-health.ts";
import { UsageError } from "./run-command.ts";
import { ensureSampleSource, hasSample } from "./sample.ts";
import { serve } from "./serve.ts";
import { isPublished, planStart, type StartPlan, switchHint } from "./start-plan.ts";
import { ensureWritableDir, StoreDirError } from "./store-check.ts";

type Logger = ReturnType<typeof createLogger>;
// Set by the primary for its forked server processes: the start-up line about Redis was printed.
const REDIS_DOWN_ENV = "START_REDIS_REPORTED_DOWN";

/** One line when REDIS_URL is set but Redis does not answer; the server starts all the same. */
async function redisReportedDown(config: Config, log: Logger): Promise<boolean> {
  if (!config.redisUrl) return false;
  const why = await probeRedis(config.redisUrl);
  if (!why) return false;
  log.warn(
    { redis: redisUrlForLog(config.redisUrl), err: why },
    "Redis is unreachable: serving anyway; the start-up pipeline run (if any) runs in this process, rate limits " +
      "count per process, queued jobs wait until Redis answers",
  );
  process.env[REDIS_DOWN_ENV] = "1";
  return true;
}

/** What the primary's steps share: its configuration, log, catalog, shutdown steps and progress line. */
interface Primary {
  config: Config;
  log: Logger;
  catalog: Catalog;
  closers: Closer[];
  redisDown: boolean;
  // The webhook events step, set once the webhook store opens; the executors call it after each publish.
  events: ReturnType<typeof deferredSink>;
  progress: TerminalProgress;
}

async function primary(config: Config): Promise<void> {
  const log = createLogger(config.logLevel);
  const closers: Closer[] = [];
  onShutdown(closers, { log });
  const redisDown = await redisReportedDown(config, log);
  const plan = planStart(config);
  const progress = terminalProgress();
  const catalog = await Catalog.at(config.catalogLocation);
  const demo = await ensureDemoUser(catalog, config.demoApiKey);
  const events = deferredSink();
  const srv = await serve(config, log, async () => catalog, { redisReportedDown: redisDown, events });
  closers.push({ name: "http server", close: srv.close });
  const p: Primary = { config, log, catalog, closers, redisDown, events, progress };
  startWorker(p);
  closers.push({ name: "catalog", close: () => catalog.close() });

  const manifest = readManifest(config.dataDir);
  // A snapshot from before the typed tables (metrics and statements as JSON text) cannot be served:
  // it is rebuilt from its own source unless another source is published now anyway.
  const typed = manifest === null || hasTypedTables(snapshotDir(config.dataDir, manifest.snapshotId));
  // The URL and the key come first, before any sample generation or run (those take a minute on
  // the default sample): the banner says what is served meanwhile, and a `serving` line follows.
  const hint = plan.kind === "serve-published" ? switchHint(plan.publishedSource) : null;
  const data = dataLine(config, plan, manifest, typed);
  process.stdout.write(startBanner({ url: srv.url, demoKey: demo.key, hint, data })); // plain stdout, never the logger
  if (config.webhooksEnabled) await openWebhooks(p);
  const sourceDir =
    plan.kind === "serve-published"
      ? null
      : (plan.sourceDir ?? (await ensureSampleSource(config.sampleDir, log, progress.update)));
  progress.stop();
  const runSource =
    sourceDir && !isPublished(manifest, sourceDir)
      ? sourceDir
      : !typed
        ? (sourceDir ?? readMeta(config.dataDir, manifest!.snapshotId).sourceDir)
        : null;
  if (runSource) await publishAtStart(p, runSource, typed, manifest !== null);
  await afterStart(p, srv.url, demo.user.id);
}

/** With Redis, this process is also a pipeline worker (unless START_WORKER=0, for deployments with
 * their own workers), so a lone `npm start` never waits forever. */
function startWorker({ config, catalog, log, closers, redisDown, events }: Primary): void {
  if (!config.redisUrl || !config.startWorker) return;
  const worker = startPipelineWorker({
    redisUrl: config.redisUrl,
    dataDir: config.dataDir,
    catalog,
    log,
    prefix: config.queuePrefix,
    rebalanceInChild: true,
    events,
  });
  logErrorsOncePerOutage(worker, log, "pipeline worker", { alreadyReported: redisDown });
  // force: an active run is not awaited (a pipeline run takes tens of seconds); BullMQ hands it
  // to another worker once its lock expires.
  closers.push({ name: "pipeline worker", close: () => worker.close(true) });
}

/** The banner's `data:` line. Written before the source is fingerprinted (it hashes every byte: a
 * second on a large source). */
function dataLine(config: Config, plan: StartPlan, manifest: Manifest | null, typed: boolean): string {
  const sampleMissing = plan.kind === "publish" && !plan.sourceDir && !hasSample(config.sampleDir);
  const source = plan.kind === "publish" ? (plan.sourceDir ?? config.sampleDir) : plan.publishedSource;
  const pending = "/healthz answers 503 until then";
  const generate = sampleMissing ? "generating the sample source, then " : "";
  return !manifest
    ? `data: ${generate}building the first snapshot, of ${source}; ${pending}`
    : !typed
      ? `data: snapshot ${manifest.snapshotId} predates the typed tables: rebuilding it; ${pending}`
      : plan.kind === "serve-published"
        ? `data: loading snapshot ${manifest.snapshotId}`
        : `data: loading snapshot ${manifest.snapshotId}; if it does not hold ${source}, a new one replaces it`;
}

/** Inserts a shutdown step just before the catalog's: what it closes still reads the catalog. */
function beforeCatalog(closers: Closer[], ...steps: Closer[]): void {
  closers.splice(
    closers.findIndex((c) => c.name === "catalog"),
    0,
    ...steps,
  );
}

/** Each publish's events and their webhook deliveries (jobs/webhooks/service.ts), after the banner
 * (opening the webhook store takes a moment); closed before the catalog they read. */
async function openWebhooks({ config, catalog, log, closers, redisDown, events }: Primary): Promise<void> {
  const hooks = await startWebhooks({ config, catalog, log, redis: !redisDown && !!config.redisUrl });
  beforeCatalog(closers, ...hooks.closers);
  events.set(hooks.sink);
}

/** The start-up pipeline run of `runSource`. A rejected source or a failed job is logged and the
 * server goes on serving what is published; with nothing published, a rejected source ends start-up. */
async function publishAtStart(p: Primary, runSource: string, typed: boolean, published: boolean): Promise<void> {
  const { config, catalog, log, progress, redisDown, events } = p;
  log.info(
    { sourceDir: runSource },
    typed
      ? "no snapshot of this source is published yet: running the pipeline"
      : "the published snapshot predates the typed tables: rebuilding it",
  );
  try {
    await dispatchRun({
      dataDir: config.dataDir,
      sourceDir: runSource,
      catalog,
      log,
      redisUrl: redisDown ? null : config.redisUrl,
      prefix: config.queuePrefix,
      progress: progress.update,
      note: progress.note,
      force: !typed,
      events,
    });
  } catch (e) {
    progress.stop();
    if (e instanceof SourceRejectedError) {
      log.error(
        { total: e.total, first: e.rejects.slice(0, 20).map(formatReject) },
        "source rejected; nothing was published",
      );
      if (!published) throw e;
    } else if (e instanceof JobFailedError) log.error({ err: e.message }, "pipeline job failed; nothing was published");
    else throw e;
  }
  progress.stop();
}

/** Once the start-up run (if any) is over: the demo's watchlist, the `serving` line, and rebalances. User
 * portfolios created or changed while no run or rebalance saw them (e.g. the demo's on a reused store) are
 * found by one query over the published portfolios table (never the snapshot loaded) and handed to the one
 * rebalance entry point once the banner is out. */
async function afterStart(p: Primary, url: string, demoUserId: string): Promise<void> {
  const { config, catalog, log, progress, redisDown, events, closers } = p;
  const current = readManifest(config.dataDir);
  const deps = { dataDir: config.dataDir, catalog, log, events };
  const missing = current ? await portfoliosWithoutBacktest(catalog, config.dataDir, current) : [];
  if (current && catalog.watchlistsOf(demoUserId).length === 0)
    await ensureDemoWatchlist(catalog, demoUserId, await publishedCompanies(config.dataDir, current.snapshotId));
  if (current) {
    progress.update(`loading snapshot ${current.snapshotId}`, 0, 1);
    const served = await waitHealthy(url, config.dataDir, log);
    progress.stop();
    if (served) process.stdout.write(readyLine(url, served));
  }
  progress.stop();
  if (!missing.length) return;
  const rebalancer =
    config.redisUrl && !redisDown
      ? queueRebalancer(config.redisUrl, catalog, log, config.queuePrefix, config.dataDir)
      : inProcessRebalancer(deps);
  // before the catalog closes: a rebalance running then reads it
  beforeCatalog(closers, { name: "start-up rebalances", close: () => rebalancer.close() });
  requestAll(deps, missing, rebalancer);
}

/** The server processes poll the manifest; the `serving` line only once they serve the published snapshot. */
async function waitHealthy(url: string, dataDir: string, log: Logger): Promise<string | null> {
  const until = Date.now() + 30_000;
  while (Date.now() < until) {
    const r = await fetch(`${url}/healthz`).catch(() => null);
    const served = r?.status === 200 ? ((await r.json()) as { snapshot?: string }).snapshot : undefined;
    if (served && served === readManifest(dataDir)?.snapshotId) return served;
    await new Promise((res) => setTimeout(res, 50));
  }
  log.warn({ url }, "the server did not serve the published snapshot within 30 s");
  return null;
}

/** A forked server process (WEB_CONCURRENCY > 1): serve, and drain on a signal as the primary does. */
async function serverProcess(config: Config): Promise<void> {
  const log = createLogger(config.logLevel);
  const closers: Closer[] = [];
  onShutdown(closers, { log });
  const srv = await serve(config, log, () => Catalog.at(config.catalogLocation), {
    redisReportedDown: config.redisReportedDown,
  });
  closers.push({ name: "http server", close: srv.close });
}

/** Expected start-up failures: one plain line each, no stack. */
function failure(e: unknown, config: Config | null): { line: string; code: number } | null {
  if (e instanceof ConfigError) return { line: e.message, code: 64 };
  if (e instanceof StoreDirError) return { line: e.message, code: 73 };
  if (e instanceof UsageError) return { line: e.message, code: 64 }; // from an environment variable here
  if (e instanceof SourceRejectedError)
    return {
      line:
        `the source was rejected (${e.total} problem(s)) and no snapshot is published yet; ` +
        `first: ${e.rejects.slice(0, 5).map(formatReject).join("; ")}`,
      code: 2,
    };
  const code = (e as NodeJS.ErrnoException)?.code;
  if (code === "EADDRINUSE")
    return {
      line: `PORT ${config?.port} is already in use: stop the other server or set PORT to a free port`,
      code: 1,
    };
  if (code === "EACCES" && (e as NodeJS.ErrnoException).syscall === "listen")
    return { line: `PORT ${config?.port} needs privileges this process lacks: use a port above 1023`, code: 1 };
  return null;
}

async function main(): Promise<void> {
  let config: Config | null = null;
  try {
    config = loadConfig();
    if (cluster.isPrimary) {
      ensureWritableDir(config.dataDir);
      if (config.sourceDir) existingSourceDir(config.sourceDir, "SOURCE_DIR");
      await primary(config);
    } else await serverProcess(config);
  } catch (e) {
    const known = failure(e, config);
    if (!known) throw e;
    console.error(known.line);
    process.exit(known.code);
  }
}

main().catch((e) => {
  console.error(e instanceof Error ? (e.stack ?? e.message) : e);
  process.exit(1);
});
