// Structured logs. API keys never reach a log line: every path that could carry one is redacted.
import pino from "pino";

export const REDACT_PATHS = ["api_key", "key", "*.api_key", "*.key", "req.headers.api_key", "req.query.api_key", "headers.api_key"];

export function createLogger(level: string = process.env.LOG_LEVEL || "info", destination?: pino.DestinationStream): pino.Logger {
  return pino({ level, redact: { paths: REDACT_PATHS, censor: "[redacted]" }, base: { pid: process.pid } }, destination);
}
