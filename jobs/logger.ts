// Structured logs. API keys never reach a log line: every path that could carry one is redacted.
import { createRequire } from "node:module";
import type pino from "pino";
import { readSetting } from "./config.ts";
import { defaultDestination } from "./log-format.ts";

// Loaded with require, as DuckDB's API is (pipeline/store/duck/duck.ts): no export scan of its CommonJS files.
const createPino = createRequire(import.meta.url)("pino") as typeof pino;

export const REDACT_PATHS = [
  "api_key",
  "key",
  "*.api_key",
  "*.key",
  "req.headers.api_key",
  "req.query.api_key",
  "headers.api_key",
];

export function createLogger(
  level: string = readSetting("LOG_LEVEL") ?? "info",
  destination?: pino.DestinationStream,
): pino.Logger {
  return createPino(
    { level, redact: { paths: REDACT_PATHS, censor: "[redacted]" }, base: { pid: process.pid } },
    destination ?? defaultDestination(),
  );
}

/**
 * The HTTP access log: one line per response, built only from fixed fields with the URL's api_key
 * already replaced (api/access-log.ts), so it needs no redaction paths, which pino would otherwise
 * walk on every line. Written through a buffered asynchronous stdout (4 KiB batches, flushed each
 * second and at exit): a synchronous write(2) per request would cost more than serving a cached read. A crash
 * can lose the last few access lines; error lines go through createLogger, synchronously.
 */
export function createAccessLogger(
  level: string = readSetting("LOG_LEVEL") ?? "info",
  destination?: pino.DestinationStream,
): pino.Logger {
  // On a terminal the access lines are pretty too (jobs/log-format.ts); a person reads them there.
  let dest = destination ?? defaultDestination();
  if (!dest) {
    const boom = createPino.destination({ dest: 1, sync: false, minLength: 4096 });
    // A quiet server still shows its lines within a second.
    setInterval(() => boom.flush(), 1000).unref();
    process.once("exit", () => {
      try {
        boom.flushSync();
      } catch {
        /* stdout already gone: nothing left to write to */
      }
    });
    dest = boom;
  }
  return createPino({ level, base: { pid: process.pid } }, dest);
}
