// Readable logs for a person, JSON lines for a machine: pino-pretty when stdout is a terminal
// (or LOG_FORMAT=pretty), pino's JSON otherwise (or LOG_FORMAT=json), so a log shipper never
// receives coloured text.
import { createRequire } from "node:module";
import { Writable } from "node:stream";
import type pino from "pino";
import type Pretty from "pino-pretty";
import { readSetting } from "./config.ts";
import { writeAboveProgress } from "./host/progress.ts";

export type LogFormat = "json" | "pretty";

export function logFormat(env?: NodeJS.ProcessEnv, isTTY = Boolean(process.stdout.isTTY)): LogFormat {
  const format = readSetting("LOG_FORMAT", env);
  if (format) return format;
  return isTTY ? "pretty" : "json";
}

/** The destination for a logger built without one: undefined means pino's own stdout (JSON). */
export function defaultDestination(): pino.DestinationStream | undefined {
  if (logFormat() !== "pretty") return undefined;
  // Synchronous and in this thread: the lines are few, and none is lost at process.exit.
  const out = new Writable({
    write(chunk, _enc, done) {
      writeAboveProgress(chunk);
      done();
    },
  });
  // Loaded here: a command whose output is piped (JSON) never pays for pino-pretty's modules.
  const pretty = createRequire(import.meta.url)("pino-pretty") as typeof Pretty;
  return pretty({
    colorize: Boolean(process.stdout.isTTY),
    translateTime: "SYS:HH:MM:ss",
    ignore: "pid,hostname",
    singleLine: true,
    sync: true,
    destination: out,
  });
}
