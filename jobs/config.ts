// Configuration: read and validated once at start; each bad variable gets its own message.
import { resolve } from "node:path";
import { z } from "zod";

const schema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  DATA_DIR: z.string().min(1).default("./data"),
  SOURCE_DIR: z.string().min(1).optional(),
  REDIS_URL: z.string().regex(/^rediss?:\/\//, "must be a redis:// or rediss:// URL").optional(),
  DEMO_API_KEY: z.string().min(16, "must be at least 16 characters").optional(),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  WEB_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(1),
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().min(1).default(6000),
  QUEUE_PREFIX: z.string().regex(/^[\w-]+$/, "letters, digits, _ and - only").optional(),
  SCHEDULE_CRON: z.string().min(1).default("0 2 * * *"),
  SCHEDULE_TZ: z.string().min(1).default("UTC"),
});

export interface Config {
  port: number;
  dataDir: string;
  /** null: the generated sample under DATA_DIR's sibling data/sample. */
  sourceDir: string | null;
  sampleDir: string;
  redisUrl: string | null;
  demoApiKey: string | null;
  logLevel: z.infer<typeof schema>["LOG_LEVEL"];
  webConcurrency: number;
  rateLimitPerMinute: number;
  /** BullMQ key prefix (default BullMQ's "bull"): deployments sharing one Redis keep apart. */
  queuePrefix: string | undefined;
  /** The nightly run's cron pattern and IANA time zone (validated when `schedule` registers it). */
  scheduleCron: string;
  scheduleTz: string;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    this.name = "ConfigError";
  }
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Empty variables count as unset, as a shell user expects of `FOO= npm start`.
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const r = schema.safeParse(present);
  if (!r.success) throw new ConfigError(r.error.issues.map((i) => `${i.path.join(".")}: ${i.message} (got ${JSON.stringify(present[String(i.path[0])])})`));
  const c = r.data;
  return {
    port: c.PORT,
    dataDir: resolve(c.DATA_DIR),
    sourceDir: c.SOURCE_DIR ? resolve(c.SOURCE_DIR) : null,
    sampleDir: resolve("data/sample"),
    redisUrl: c.REDIS_URL ?? null,
    demoApiKey: c.DEMO_API_KEY ?? null,
    logLevel: c.LOG_LEVEL,
    webConcurrency: c.WEB_CONCURRENCY,
    rateLimitPerMinute: c.RATE_LIMIT_PER_MINUTE,
    queuePrefix: c.QUEUE_PREFIX,
    scheduleCron: c.SCHEDULE_CRON,
    scheduleTz: c.SCHEDULE_TZ,
  };
}
