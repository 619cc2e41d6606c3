// Redis reachability for operators: one probe at start with a clear answer, and connection errors
// of long-lived clients (ioredis retries every second or two) logged once per outage instead of a
// stack trace per retry.
import type { EventEmitter } from "node:events";
import { Redis } from "ioredis";
import type { Log } from "../pipeline/stages/context.ts";

/** The URL with any password replaced, for log lines. */
export function redisUrlForLog(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString().replace(/\/$/, "");
  } catch {
    return "(unparseable REDIS_URL)";
  }
}

/** null when Redis answers PING within `timeoutMs`, else the reason in a few words. */
export async function probeRedis(url: string, timeoutMs = 2_000): Promise<string | null> {
  const r = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
  });
  // connect() rejects with a bare "Connection is closed"; the error event has the cause.
  let cause: string | undefined;
  r.on("error", (e: Error) => (cause ??= e.message));
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>(
      (_, rej) => (timer = setTimeout(() => rej(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs)),
    );
    await Promise.race([r.connect().then(() => r.ping()), timeout]);
    return null;
  } catch (e) {
    return cause ?? ((e as Error).message || String(e));
  } finally {
    clearTimeout(timer);
    r.disconnect();
  }
}

/**
 * Logs the first error of an outage as one warn line, then at most one reminder per `everyMs`;
 * a `ready` event (ioredis, BullMQ) ends the outage with one info line.
 */
export function logErrorsOncePerOutage(
  emitter: EventEmitter,
  log: Log,
  what: string,
  opts: { everyMs?: number; alreadyReported?: boolean } = {},
): void {
  const everyMs = opts.everyMs ?? 60_000;
  // The start-up probe already said Redis is unreachable: stay quiet until the first reminder.
  let down = opts.alreadyReported ?? false;
  let last = down ? Date.now() : 0;
  let suppressed = 0;
  emitter.on("error", (e: Error) => {
    const now = Date.now();
    if (!down || now - last >= everyMs) {
      log.warn(
        { err: e?.message ?? String(e), ...(down ? { repeated: suppressed } : {}) },
        down ? `${what}: Redis still unreachable` : `${what}: Redis unreachable; retrying quietly`,
      );
      last = now;
      suppressed = 0;
    } else suppressed++;
    down = true;
  });
  emitter.on("ready", () => {
    if (down) log.info({}, `${what}: Redis reachable again`);
    down = false;
  });
}
