// Data engineers' command line: `npm run pipeline -- <command>`.
import { parseArgs } from "node:util";
import { join, resolve } from "node:path";
import { Catalog } from "../pipeline/store/catalog/catalog.ts";
import { formatReject, SourceRejectedError } from "../pipeline/sources/report.ts";
import { readManifest, readMeta } from "../pipeline/store/snapshots.ts";
import { loadSnapshot } from "../pipeline/store/load-snapshot.ts";
import { rebalanceOne } from "../pipeline/stages/rebalance.ts";
import type { PortfolioRules } from "../pipeline/types.ts";
import { loadConfig } from "./config.ts";
import { createLogger } from "./logger.ts";
import { terminalProgress } from "./progress.ts";
import { dispatchRun, JobFailedError, scheduleNightly } from "./dispatch.ts";
import { startPipelineWorker } from "./worker.ts";
import { runCommand, UsageError } from "./run-command.ts";
import { ensureSampleSource } from "./sample.ts";
import { backfillWindow, existingSourceDir } from "./cli-args.ts";
import { ensureWritableDir } from "./store-check.ts";
import { probeRedis, redisUrlForLog } from "./redis-health.ts";

const USAGE = `usage: npm run pipeline -- <command>
  run [--source DIR]     ingest DIR (default: SOURCE_DIR, else the generated sample), compute, publish;
                         with REDIS_URL set the run is a BullMQ job that any worker may take
  backfill --from DATE --to DATE [--source DIR]
                         the source replaces only that date range of the published history
                         (prices, ratings, index levels); everything is recomputed and published
  worker                 a BullMQ worker process for pipeline jobs (needs REDIS_URL)
  schedule [--cron P] [--source DIR]
                         registers the nightly run (default cron "0 2 * * *", UTC; needs REDIS_URL)
  rebalance --portfolio ID
                         recomputes one portfolio (user or predefined) on the published snapshot and
                         publishes the result; every other table is reused as it is
  status                 the published snapshot, its source and timings`;

const COMMANDS = new Set(["run", "backfill", "worker", "schedule", "rebalance", "status"]);

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === "help" || command === "--help" || command === "-h") {
    console.log(USAGE);
    return 0;
  }
  if (!COMMANDS.has(command)) throw new UsageError(`unknown command ${JSON.stringify(command)}`);
  const config = loadConfig();
  ensureWritableDir(config.dataDir);
  const log = createLogger(config.logLevel === "info" ? "warn" : config.logLevel);
  if (command === "run" || command === "backfill") {
    const runOptions = { source: { type: "string" } } as const;
    const options = command === "backfill" ? { ...runOptions, from: { type: "string" }, to: { type: "string" } } as const : runOptions;
    const { values } = parseArgs({ args: rest, options }) as { values: { source?: string; from?: string; to?: string } };
    const window = command === "backfill" ? backfillWindow(values) : undefined;
    const progress = terminalProgress();
    const sourceDir = values.source
      ? existingSourceDir(values.source, "--source")
      : config.sourceDir
        ? existingSourceDir(config.sourceDir, "SOURCE_DIR")
        : await ensureSampleSource(config.sampleDir, log, progress.update);
    if (config.redisUrl) {
      // The run must go through the queue: say so at once rather than wait on a dead connection.
      const why = await probeRedis(config.redisUrl);
      if (why) throw new Error(`Redis at ${redisUrlForLog(config.redisUrl)} is unreachable (${why}): start it, or unset REDIS_URL to run in this process`);
    }
    const catalog = await Catalog.open(join(config.dataDir, "catalog.duckdb"));
    try {
      const r = await dispatchRun({ dataDir: config.dataDir, sourceDir, catalog, log, redisUrl: config.redisUrl, progress: progress.update, window });
      progress.stop();
      console.log(`published snapshot ${r.snapshotId} from ${sourceDir} in ${r.totalMs} ms`);
      return 0;
    } catch (e) {
      progress.stop();
      if (e instanceof SourceRejectedError) {
        console.error(`source ${sourceDir} rejected: ${e.total} problem(s); nothing was published.`);
        for (const r of e.rejects.slice(0, 200)) console.error(`  ${formatReject(r)}`);
        if (e.total > 200) console.error(`  … and ${e.total - 200} more`);
        return 2;
      }
      if (e instanceof JobFailedError) {
        console.error(`pipeline job failed; nothing was published:\n${e.message}`);
        return 2;
      }
      throw e;
    }
  }
  if (command === "worker" || command === "schedule") {
    if (!config.redisUrl) {
      console.error(`${command} needs REDIS_URL (e.g. REDIS_URL=redis://127.0.0.1:6379)`);
      return 64;
    }
    if (command === "schedule") {
      const { values } = parseArgs({ args: rest, options: { cron: { type: "string" }, source: { type: "string" } } });
      const sourceDir = resolve(values.source ?? config.sourceDir ?? config.sampleDir);
      const { next } = await scheduleNightly(config.redisUrl, sourceDir, values.cron);
      console.log(`nightly run of ${sourceDir} scheduled (${values.cron ?? "0 2 * * *"} UTC); next at ${next ? new Date(next).toISOString() : "?"}`);
      return 0;
    }
    const catalog = await Catalog.open(join(config.dataDir, "catalog.duckdb"));
    const worker = startPipelineWorker({ redisUrl: config.redisUrl, dataDir: config.dataDir, catalog, log: createLogger(config.logLevel) });
    console.log(`pipeline worker ${process.pid} waiting for jobs`);
    await new Promise<void>((res) => process.once("SIGTERM", res).once("SIGINT", res));
    await worker.close();
    return 0;
  }
  if (command === "rebalance") {
    const { values } = parseArgs({ args: rest, options: { portfolio: { type: "string" } } });
    if (!values.portfolio) throw new UsageError("rebalance needs --portfolio ID");
    const catalog = await Catalog.open(join(config.dataDir, "catalog.duckdb"));
    const m = readManifest(config.dataDir);
    const snap = m ? await loadSnapshot(config.dataDir, m.snapshotId) : null;
    const user = catalog.userPortfolio(values.portfolio);
    const published = snap?.portfolios.get(values.portfolio);
    const { ownerId, createdAt, ...userRules } = user ?? { ownerId: null, createdAt: null };
    const portfolio = user ? { rules: userRules as PortfolioRules, ownerId, createdAt } : published ? { rules: published.rules, ownerId: published.ownerId, createdAt: published.createdAt } : null;
    if (!portfolio) {
      console.error(`no portfolio ${values.portfolio} in the catalog or the published snapshot`);
      return 2;
    }
    const meta = await rebalanceOne({ dataDir: config.dataDir, log, portfolio });
    console.log(`portfolio ${values.portfolio} recomputed; published snapshot ${meta.id} in ${meta.timingsMs.total} ms`);
    return 0;
  }
  parseArgs({ args: rest, options: {} }); // status takes no options: refuse any
  const m = readManifest(config.dataDir);
  if (!m) {
    console.log(`no snapshot published under ${config.dataDir}`);
    return 1;
  }
  const meta = readMeta(config.dataDir, m.snapshotId);
  console.log(JSON.stringify({ snapshot: m.snapshotId, publishedAt: m.publishedAt, source: meta.sourceDir, sourceId: meta.sourceId, lastPriceDate: meta.lastPriceDate, counts: meta.counts, timingsMs: meta.timingsMs, kept: m.history }, null, 2));
  return 0;
}

runCommand(main, { usage: USAGE });
