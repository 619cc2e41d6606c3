// Configuration: read and validated once at start; each bad variable gets its own message.
import { resolve } from "node:path";
import { z } from "zod";

const schema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  DATA_DIR: z.string().min(1).default("./data"),
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
  /** Origins browsers may read responses from (CORS), "*", or null for none. */
  corsOrigins: string[] | "*" | null;
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
  if (!r.success)
    throw new ConfigError(
      r.error.issues.map(
        (i) =>
          `${i.path.join(".")}: ${i.message}${i.path[0] === "DEMO_API_KEY" ? "" : ` (got ${JSON.stringify(present[String(i.path[0])])})`}`,
      ),
    ); // a secret is never echoed
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
    corsOrigins: c.CORS_ORIGINS ?? null,
    queuePrefix: c.QUEUE_PREFIX,
    scheduleCron: c.SCHEDULE_CRON,
    scheduleTz: c.SCHEDULE_TZ,
  };
}
