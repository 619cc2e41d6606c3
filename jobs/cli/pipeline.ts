// Data engineers' command line: `npm run pipeline -- <command>`.

import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { formatReject, SourceRejectedError } from "../../pipeline/sources/report.ts";
import { PortfolioNotFoundError } from "../../pipeline/stages/rebalance.ts";
import { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { NoSpaceError, readManifest } from "../../pipeline/store/snapshot/snapshots.ts";
import { loadConfig } from "../config.ts";
import { backfillWindow, existingSourceDir } from "../host/cli-args.ts";
import { terminalProgress } from "../host/progress.ts";
import { runCommand, UsageError } from "../host/run-command.ts";
import { ensureWritableDir } from "../host/store-check.ts";
import { createLogger } from "../logger.ts";
import {
  DEFAULT_TIMEOUT_MS,
  dispatchRebalance,
  dispatchRun,
  JobFailedError,
  JobTimeoutError,
} from "../queue/dispatch.ts";

// Each command loads what only it needs when it runs (BullMQ, ioredis, cron-parser, the sample
// generator): an in-process run does not wait on a few hundred ms of modules it never calls.

const USAGE = `usage: npm run pipeline -- <command>
  run [--source DIR] [--force] [--timeout SEC]
                         ingest DIR (default: SOURCE_DIR, else the generated sample), compute, publish;
                         with REDIS_URL set the run is a BullMQ job that any worker may take, and this
                         command waits at most --timeout seconds (default 3600) showing progress.
                         A source the published snapshot already holds is not recomputed (--force does)
  backfill --from DATE --to DATE [--source DIR] [--force] [--timeout SEC]
                         the source replaces only that date range of the published history
                         (prices, ratings, index levels); everything is recomputed and published
  worker                 a BullMQ worker process for pipeline jobs (needs REDIS_URL)
  schedule [--cron P] [--tz ZONE] [--source DIR]
                         registers the nightly run (default SCHEDULE_CRON "0 2 * * *" in SCHEDULE_TZ UTC;
                         needs REDIS_URL); a missing source or a bad pattern is refused now
  schedule --remove      removes the nightly run (a run it already started goes on)
  rebalance --portfolio ID [--timeout SEC]
                         recomputes one portfolio (user or predefined) on the snapshot current when it
                         publishes; every other table is reused as it is (a BullMQ job with REDIS_URL)
  status [--json]        the published snapshot; with REDIS_URL also the queue: counts, runs (their
                         jobs done of all, progress), running jobs, workers, the nightly scheduler.
                         Readable lines on a terminal, JSON with --json or when stdout is not one`;

function timeoutOf(v: string | undefined): number | null {
  if (v === undefined) return DEFAULT_TIMEOUT_MS;
  const n = Number(v);
  return Number.isFinite(n) && n > 0 ? n * 1000 : null;
}

const COMMANDS = new Set(["run", "backfill", "worker", "schedule", "rebalance", "status"]);

type Config = ReturnType<typeof loadConfig>;
type Logger = ReturnType<typeof createLogger>;

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
  if (command === "run" || command === "backfill") return runCommandOf(command, rest, config, log);
  if (command === "worker" || command === "schedule") {
    if (!config.redisUrl) {
      console.error(`${command} needs REDIS_URL (e.g. REDIS_URL=redis://127.0.0.1:6379)`);
      return 64;
    }
    return command === "schedule" ? schedule(rest, config, config.redisUrl) : worker(config, config.redisUrl);
  }
  if (command === "rebalance") return rebalance(rest, config, log);
  return status(rest, config);
}

/** `run` and `backfill`: the run dispatched (in this process, or as a job this process waits for). */
async function runCommandOf(command: "run" | "backfill", rest: string[], config: Config, log: Logger) {
  const runOptions = { source: { type: "string" }, force: { type: "boolean" }, timeout: { type: "string" } } as const;
  const options =
    command === "backfill"
      ? ({ ...runOptions, from: { type: "string" }, to: { type: "string" } } as const)
      : runOptions;
  const { values } = parseArgs({ args: rest, options }) as {
    values: { source?: string; from?: string; to?: string; force?: boolean; timeout?: string };
  };
  const window = command === "backfill" ? backfillWindow(values) : undefined;
  const timeoutMs = timeoutOf(values.timeout);
  if (timeoutMs === null)
    throw new UsageError(`--timeout must be a positive number of seconds (got ${JSON.stringify(values.timeout)})`);
  const progress = terminalProgress();
  const sourceDir = values.source
    ? existingSourceDir(values.source, "--source")
    : config.sourceDir
      ? existingSourceDir(config.sourceDir, "SOURCE_DIR")
      : await (await import("../host/sample.ts")).ensureSampleSource(config.sampleDir, log, progress.update);
  if (config.redisUrl) await requireRedis(config.redisUrl);
  const catalog = await Catalog.at(config.catalogLocation);
  try {
    const r = await dispatchRun({
      dataDir: config.dataDir,
      sourceDir,
      catalog,
      log,
      redisUrl: config.redisUrl,
      prefix: config.queuePrefix,
      progress: progress.update,
      note: progress.note,
      window,
      timeoutMs,
      force: values.force,
    });
    progress.stop();
    if (r.skipped)
      console.log(
        `snapshot ${r.snapshotId} already ` +
          `holds ${sourceDir}${window ? ` backfilled over ${window.from}..${window.to}` : ""}; nothing ` +
          `recomputed (--force recomputes)`,
      );
    else console.log(`published snapshot ${r.snapshotId} from ${sourceDir} in ${r.totalMs} ms`);
    return 0;
  } catch (e) {
    progress.stop();
    return runFailure(e, sourceDir);
  }
}

/** The run must go through the queue: say so at once rather than wait on a dead connection. */
async function requireRedis(redisUrl: string): Promise<void> {
  const { probeRedis, redisUrlForLog } = await import("../host/redis-health.ts");
  const why = await probeRedis(redisUrl);
  if (why)
    throw new Error(
      `Redis at ${redisUrlForLog(redisUrl)} is unreachable (${why}): start it, or unset ` +
        `REDIS_URL to run in this process`,
    );
}

/** A failed run's exit code, after saying why; an unexpected error is thrown on. */
function runFailure(e: unknown, sourceDir: string): number {
  if (e instanceof SourceRejectedError) {
    console.error(`source ${sourceDir} rejected: ${e.total} problem(s); nothing was published.`);
    for (const r of e.rejects.slice(0, 200)) console.error(`  ${formatReject(r)}`);
    if (e.total > 200) console.error(`  … and ${e.total - 200} more`);
    return 2;
  }
  if (e instanceof JobTimeoutError) {
    console.error(e.message);
    return 2;
  }
  if (e instanceof NoSpaceError) {
    console.error(e.message);
    return 1;
  }
  if (e instanceof JobFailedError) {
    console.error(`pipeline job failed; nothing was published:\n${e.message}`);
    return 2;
  }
  throw e;
}

/** `schedule [--remove]`: the nightly run registered (or removed). */
async function schedule(rest: string[], config: Config, redisUrl: string): Promise<number> {
  const prefix = config.queuePrefix;
  const { scheduleNightly, ScheduleError, unscheduleNightly } = await import("../queue/schedule.ts");
  const { values } = parseArgs({
    args: rest,
    options: {
      cron: { type: "string" },
      tz: { type: "string" },
      source: { type: "string" },
      remove: { type: "boolean" },
    },
  });
  if (values.remove) {
    if (values.cron || values.tz || values.source) throw new UsageError("schedule --remove takes no other option");
    const removed = await unscheduleNightly(redisUrl, prefix);
    console.log(removed ? "nightly run unscheduled" : "no nightly run was scheduled; nothing to remove");
    return 0;
  }
  const sourceDir = resolve(values.source ?? config.sourceDir ?? config.sampleDir);
  const cron = values.cron ?? config.scheduleCron;
  const tz = values.tz ?? config.scheduleTz;
  try {
    const { next } = await scheduleNightly(redisUrl, sourceDir, cron, prefix, tz);
    console.log(`nightly run of ${sourceDir} scheduled ("${cron}" in ${tz}); next at ${new Date(next).toISOString()}`);
    return 0;
  } catch (e) {
    if (e instanceof ScheduleError) {
      console.error(e.message);
      return 2;
    }
    throw e;
  }
}

/** `worker`: a BullMQ worker process until SIGTERM or SIGINT. */
async function worker(config: Config, redisUrl: string): Promise<number> {
  const catalog = await Catalog.at(config.catalogLocation);
  const { startPipelineWorker } = await import("../worker/worker.ts");
  // Flow jobs run one after another on this thread: one scratch database serves them all.
  (await import("../../pipeline/store/duck/scratch.ts")).shareScratchOnMainThread();
  const workerLog = createLogger(config.logLevel);
  // Webhooks: this worker runs the events step after its publishes and delivers from the queue.
  const hooks = config.webhooksEnabled
    ? await (await import("../webhooks/service.ts")).workerWebhooks({
        config: { ...config, redisUrl },
        catalog,
        log: workerLog,
      })
    : null;
  const w = startPipelineWorker({
    redisUrl,
    dataDir: config.dataDir,
    catalog,
    log: workerLog,
    prefix: config.queuePrefix,
    events: hooks?.sink,
  });
  (await import("../host/redis-health.ts")).logErrorsOncePerOutage(w, workerLog, "pipeline worker");
  let redisDown = false;
  w.on("error", () => (redisDown = true)).on("ready", () => (redisDown = false));
  console.log(`pipeline worker ${process.pid} waiting for jobs`);
  await new Promise<void>((res) => process.once("SIGTERM", res).once("SIGINT", res));
  // A graceful close waits for the active job, and forever on a Redis that is gone: then force it,
  // or stop waiting (the process exits; the job's lock lapses and another worker takes it over).
  const redisLost = new Promise((res) => w.once("error", res));
  await (redisDown ? w.close(true) : Promise.race([w.close(), redisLost]));
  for (const c of hooks?.closers ?? []) await Promise.resolve(c.close()).catch(() => undefined);
  return 0;
}

/** `rebalance --portfolio ID`: one portfolio recomputed and published. */
async function rebalance(rest: string[], config: Config, log: Logger): Promise<number> {
  const { values } = parseArgs({
    args: rest,
    options: { portfolio: { type: "string" }, timeout: { type: "string" } },
  });
  if (!values.portfolio) throw new UsageError("rebalance needs --portfolio ID");
  const timeoutMs = timeoutOf(values.timeout);
  if (timeoutMs === null)
    throw new UsageError(`--timeout must be a positive number of seconds (got ${JSON.stringify(values.timeout)})`);
  if (!readManifest(config.dataDir)) {
    console.error(`no snapshot is published under ${config.dataDir}: run the pipeline first`);
    return 2;
  }
  const catalog = await Catalog.at(config.catalogLocation);
  const progress = terminalProgress();
  try {
    const r = await dispatchRebalance({
      dataDir: config.dataDir,
      portfolioId: values.portfolio,
      catalog,
      log,
      redisUrl: config.redisUrl,
      prefix: config.queuePrefix,
      note: progress.note,
      timeoutMs,
    });
    console.log(
      `portfolio ${values.portfolio} recomputed; published ` +
        `snapshot ${r.snapshotId}${r.skipped ? " (already current: nothing recomputed)" : ` in ${r.totalMs} ms`}`,
    );
    return 0;
  } catch (e) {
    if (e instanceof PortfolioNotFoundError || e instanceof JobTimeoutError) {
      console.error(e.message);
      return 2;
    }
    if (e instanceof JobFailedError) {
      console.error(`rebalance job failed; nothing was published:\n${e.message}`);
      return 2;
    }
    throw e;
  }
}

/** `status [--json]`: the published snapshot and, with REDIS_URL, the queue. */
async function status(rest: string[], config: Config): Promise<number> {
  const { values } = parseArgs({ args: rest, options: { json: { type: "boolean" } } });
  const { gatherStatus } = await import("./status.ts");
  const s = await gatherStatus(config.dataDir, config.redisUrl, config.queuePrefix).catch((e: Error) => {
    console.error(`queue status unavailable: ${e.message}`);
    return gatherStatus(config.dataDir, null);
  });
  // Readable lines on a terminal; JSON with --json and whenever stdout is not one (scripts read it).
  if (values.json || !process.stdout.isTTY) {
    console.log(JSON.stringify(s, null, 2));
    if (!s.snapshot) console.error(`no snapshot published under ${config.dataDir}`);
  } else console.log((await import("./status-text.ts")).statusText(s, config.dataDir));
  return s.snapshot ? 0 : 1;
}

runCommand(main, { usage: USAGE });
