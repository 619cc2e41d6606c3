// Configuration: every environment variable the service reads, validated once at start; each bad
// variable gets its own message. Nothing else reads process.env: the rest of jobs/ asks
// serviceConfig(), and api/ and pipeline/ take their values as arguments from jobs/.
import { join, resolve } from "node:path";
import { z } from "zod";
import { DUCK_MEMORY } from "../pipeline/store/duck/duck-memory.ts";
import { DELIVERY_DEFAULTS, type DeliverySettings } from "./webhooks/settings.ts";

/** A whole number from a variable, at least `min`: "abc" or "2.5" is refused, not read as NaN. */
const whole = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce
    .number({ error: "must be a whole number" })
    .int("must be a whole number")
    .min(min, `must be at least ${min}`)
    .max(max, `must be at most ${max}`);

/** "0" or "1" for a switch; anything else is a typo to report. */
const onOff = z.enum(["0", "1"], { error: 'must be "0" or "1"' });

const schema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  // Not ./data: that folder holds the generator's code, and `rm -rf` of a store must delete none.
  DATA_DIR: z.string().min(1).default("./store"),
  SOURCE_DIR: z.string().min(1).optional(),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, "must be a redis:// or rediss:// URL")
    .optional(),
  DEMO_API_KEY: z.string().min(16, "must be at least 16 characters").optional(),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  // Read by jobs/log-format.ts; validated here so a typo is reported rather than ignored.
  LOG_FORMAT: z.enum(["json", "pretty"]).optional(),
  WEB_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(1),
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(6000),
  // unset: the API's own default (COST_PER_MINUTE, api/graphql/cost.ts)
  GRAPHQL_COST_PER_MINUTE: z.coerce.number().int().min(1).optional(),
  // MiB of whole answers the node:http fast path serves from (api/fast/); 0 turns the fast path off
  RESPONSE_CACHE_MB: z.coerce.number().int().min(0).max(65_536).default(64),
  // Proxies in front of the API whose X-Forwarded-For entries are believed (api/client-address.ts); 0: none
  TRUST_PROXY: whole(0, 16).default(0),
  // Bulk exports (/data/v1/export) streaming at once per server process; more are refused with a 503
  EXPORT_MAX_CONCURRENT: whole(1, 1000).default(4),
  // MB of whole-table export files kept under DATA_DIR/cache/exports (the oldest go first); 0: none kept
  EXPORT_CACHE_MB: whole(0, 16_777_216).default(4096),
  // "*" or a comma-separated list of origins (scheme://host[:port], no path)
  CORS_ORIGINS: z
    .string()
    .transform((v) =>
      v.trim() === "*"
        ? ("*" as const)
        : v
            .split(",")
            .map((o) => o.trim())
            .filter(Boolean),
    )
    .refine(
      (v) => v === "*" || (v.length > 0 && v.every((o) => /^https?:\/\/[^/\s?#]+$/.test(o))),
      'must be "*" or comma-separated origins such as https://app.example.com',
    )
    .optional(),
  QUEUE_PREFIX: z
    .string()
    .regex(/^[\w-]+$/, "letters, digits, _ and - only")
    .optional(),
  SCHEDULE_CRON: z.string().min(1).default("0 2 * * *"),
  SCHEDULE_TZ: z.string().min(1).default("UTC"),
  PIPELINE_WORKERS: whole(0, 64).optional(),
  PIPELINE_FLOW: onOff.optional(),
  PIPELINE_APPEND: onOff.optional(),
  START_WORKER: onOff.optional(),
  PIPELINE_WORKER_THREADS: whole(1, 64).default(1),
  TICKERS_PER_PARTITION: whole(1).optional(),
  // A DuckDB size (its memory_limit setting): a number and a unit.
  PIPELINE_DUCKDB_MEMORY: z
    .string()
    .regex(/^\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i, "must be a size such as 1024MB or 2GB")
    .default(DUCK_MEMORY.staging),
  // The accounts on PostgreSQL (several hosts); unset: the embedded DuckDB file DATA_DIR/catalog.duckdb.
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\/\S+$/, "must be a postgres:// or postgresql:// URL")
    .optional(),
  // Webhook delivery (jobs/webhooks/settings.ts says what each is; docs/operators/deployment.md)
  WEBHOOKS: onOff.optional(),
  WEBHOOK_ALLOW_HTTP: onOff.optional(),
  WEBHOOK_ALLOW_PRIVATE: onOff.optional(),
  WEBHOOK_TIMEOUT_MS: whole(100, 60_000).default(DELIVERY_DEFAULTS.timeoutMs),
  WEBHOOK_ATTEMPTS: whole(1, 50).default(DELIVERY_DEFAULTS.attempts),
  WEBHOOK_BACKOFF_MS: whole(1).default(DELIVERY_DEFAULTS.backoffMs),
  WEBHOOK_BACKOFF_CAP_MS: whole(1).default(DELIVERY_DEFAULTS.backoffCapMs),
  WEBHOOK_DISABLE_AFTER: whole(1).default(DELIVERY_DEFAULTS.disableAfter),
  WEBHOOK_CONCURRENCY: whole(1, 1000).default(DELIVERY_DEFAULTS.concurrency),
  WEBHOOK_PER_RECEIVER: whole(1, 100).default(DELIVERY_DEFAULTS.perWebhook),
  // Set by `npm start`'s primary for the server processes it forks (jobs/host/start.ts), not by hand.
  START_REDIS_REPORTED_DOWN: z.literal("1", { error: 'must be "1" or unset' }).optional(),
});

export interface Config {
  port: number;
  dataDir: string;
  /** null: the generated sample, `sampleDir`. */
  sourceDir: string | null;
  /** DATA_DIR/sample: the generated sample lives with the rest of what the service writes. */
  sampleDir: string;
  redisUrl: string | null;
  /** DATABASE_URL: the catalog on PostgreSQL; null: the embedded file. */
  databaseUrl: string | null;
  /** Where the catalog lives (Catalog.at): DATABASE_URL, else DATA_DIR/catalog.duckdb. */
  catalogLocation: string;
  demoApiKey: string | null;
  logLevel: z.infer<typeof schema>["LOG_LEVEL"];
  webConcurrency: number;
  rateLimitPerMinute: number;
  /** GraphQL cost points an api key may spend a minute (api/graphql/cost.ts). */
  graphqlCostPerMinute: number | undefined;
  /** Bytes of the response cache the API's fast path serves from (api/output/answer-cache.ts); 0: no fast path. */
  responseCacheBytes: number;
  /** Proxy hops before the API whose X-Forwarded-For entry is believed (TRUST_PROXY); 0: the socket's address. */
  trustProxy: number;
  /** Bulk exports a server process streams at once (api/rest/export.ts); beyond: 503 + Retry-After. */
  exportMaxConcurrent: number;
  /** MB of whole-table export files kept (pipeline/store/read/export-cache.ts); 0: every export is streamed. */
  exportCacheMB: number;
  /** Origins browsers may read responses from (CORS), "*", or null for none. */
  corsOrigins: string[] | "*" | null;
  /** BullMQ key prefix (default BullMQ's "bull"): deployments sharing one Redis keep apart. */
  queuePrefix: string | undefined;
  /** The nightly run's cron pattern and IANA time zone (validated when `schedule` registers it). */
  scheduleCron: string;
  scheduleTz: string;
  /** null: pretty on a terminal, JSON otherwise (jobs/log-format.ts). */
  logFormat: "json" | "pretty" | null;
  /** Worker threads of the in-process runner's partition jobs; null: one per core, at most 4. */
  pipelineWorkers: number | null;
  /** A queued run is a flow of jobs (PIPELINE_FLOW unset or 1), or one `run` job (0). */
  pipelineFlow: boolean;
  /** A source that only added days continues the published snapshot (PIPELINE_APPEND unset or 1). */
  pipelineAppend: boolean;
  /** With REDIS_URL, `npm start` is also a pipeline queue worker (START_WORKER unset or 1). */
  startWorker: boolean;
  /** DuckDB threads of a worker process's flow jobs. */
  workerThreads: number;
  /** Companies per financials and stock-metric job of a flow; undefined: the pipeline's default (250). */
  tickersPerPartition: number | undefined;
  /** memory_limit of a run's staging DuckDB. */
  stagingMemory: string;
  /** A forked server process: the primary has printed already that Redis is unreachable. */
  redisReportedDown: boolean;
  /** `npm start` computes each publish's events and delivers webhooks (WEBHOOKS unset or 1). */
  webhooksEnabled: boolean;
  webhooks: DeliverySettings;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

/** Values never echoed in a configuration error: a key, a URL that may hold a password. */
const SECRETS = new Set(["DEMO_API_KEY", "DATABASE_URL"]);

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Empty variables count as unset, as a shell user expects of `FOO= npm start`.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const r = schema.safeParse(present);
  if (!r.success)
    throw new ConfigError(
      r.error.issues.map(
        (i) =>
          `${i.path.join(".")}: ${i.message}` +
          `${SECRETS.has(String(i.path[0])) ? "" : ` (got ${JSON.stringify(present[String(i.path[0])])})`}`,
      ),
    ); // a secret is never echoed
  const c = r.data;
  const dataDir = resolve(c.DATA_DIR);
  return {
    port: c.PORT,
    dataDir,
    sourceDir: c.SOURCE_DIR ? resolve(c.SOURCE_DIR) : null,
    sampleDir: join(dataDir, "sample"),
    redisUrl: c.REDIS_URL ?? null,
    databaseUrl: c.DATABASE_URL ?? null,
    catalogLocation: c.DATABASE_URL ?? join(dataDir, "catalog.duckdb"),
    demoApiKey: c.DEMO_API_KEY ?? null,
    logLevel: c.LOG_LEVEL,
    webConcurrency: c.WEB_CONCURRENCY,
    rateLimitPerMinute: c.RATE_LIMIT_PER_MINUTE,
    graphqlCostPerMinute: c.GRAPHQL_COST_PER_MINUTE,
    responseCacheBytes: c.RESPONSE_CACHE_MB * 1024 * 1024,
    trustProxy: c.TRUST_PROXY,
    exportMaxConcurrent: c.EXPORT_MAX_CONCURRENT,
    exportCacheMB: c.EXPORT_CACHE_MB,
    corsOrigins: c.CORS_ORIGINS ?? null,
    queuePrefix: c.QUEUE_PREFIX,
    scheduleCron: c.SCHEDULE_CRON,
    scheduleTz: c.SCHEDULE_TZ,
    logFormat: c.LOG_FORMAT ?? null,
    pipelineWorkers: c.PIPELINE_WORKERS ?? null,
    pipelineFlow: c.PIPELINE_FLOW !== "0",
    pipelineAppend: c.PIPELINE_APPEND !== "0",
    startWorker: c.START_WORKER !== "0",
    workerThreads: c.PIPELINE_WORKER_THREADS,
    tickersPerPartition: c.TICKERS_PER_PARTITION,
    stagingMemory: c.PIPELINE_DUCKDB_MEMORY,
    redisReportedDown: c.START_REDIS_REPORTED_DOWN === "1",
    webhooksEnabled: c.WEBHOOKS !== "0",
    webhooks: {
      allowHttp: c.WEBHOOK_ALLOW_HTTP === "1",
      allowPrivate: c.WEBHOOK_ALLOW_PRIVATE === "1",
      timeoutMs: c.WEBHOOK_TIMEOUT_MS,
      attempts: c.WEBHOOK_ATTEMPTS,
      backoffMs: c.WEBHOOK_BACKOFF_MS,
      backoffCapMs: c.WEBHOOK_BACKOFF_CAP_MS,
      disableAfter: c.WEBHOOK_DISABLE_AFTER,
      concurrency: c.WEBHOOK_CONCURRENCY,
      perWebhook: c.WEBHOOK_PER_RECEIVER,
    },
  };
}

/**
 * The process's configuration, read from its environment when asked (under a millisecond; the
 * callers ask once per run or job). The commands' entry points call loadConfig first and stop on
 * a ConfigError, so a bad value is reported before anything runs.
 */
export function serviceConfig(): Config {
  return loadConfig();
}

/**
 * One variable read alone, for what must work before (or without) the whole configuration: the
 * loggers, which report a bad configuration. A bad value reads as unset; loadConfig reports it.
 */
export function readSetting<K extends "LOG_LEVEL" | "LOG_FORMAT">(
  name: K,
  env: NodeJS.ProcessEnv = process.env,
): z.infer<typeof schema>[K] | undefined {
  const v = env[name];
  const r = schema.shape[name].safeParse(v === "" ? undefined : v);
  return r.success ? (r.data as z.infer<typeof schema>[K]) : undefined;
}
