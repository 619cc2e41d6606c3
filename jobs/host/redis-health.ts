// Redis reachability for operators: one probe at start with a clear answer, and connection errors
// of long-lived clients (ioredis retries every second or two) logged once per outage instead of a
// stack trace per retry.
import type { EventEmitter } from "node:events";
import { Redis } from "ioredis";
import type { BlockBroadcast } from "../../api/auth-failures.ts";
import type { Log } from "../../pipeline/stages/context.ts";

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

/**
 * A client for the request path (rate limits, the failed-auth throttle): a command waits at most
 * `commandMs`, and a ping every second that goes unanswered drops the connection. A Redis host cut
 * off the network answers nothing, not even a reset, so without this the socket stays "ready" and
 * every request waits on it; dropped, the client is reconnecting and the limiters count in memory
 * at once (rejectIfRedisNotReady) until a reconnect succeeds.
 */
export function requestPathRedis(url: string, commandMs = 500): Redis {
  const redis = new Redis(url, { enableOfflineQueue: false, commandTimeout: commandMs, connectTimeout: 2_000 });
  const watchdog = setInterval(() => {
    if (redis.status !== "ready") return;
    redis.ping().catch(() => {
      // an unanswered ping while "ready" is a dead link, not a busy server: reconnect (the error
      // event of the failed reconnect is what the outage log line reports)
      if (redis.status === "ready") redis.disconnect(true);
    });
  }, 1_000).unref();
  redis.on("end", () => clearInterval(watchdog));
  return redis;
}

/**
 * The failed-auth throttle's block list shared through Redis pub/sub: one message per address that
 * went over the shared count, heard by every server on the same prefix. Lost while Redis is away
 * (each server then blocks on its own count, as the insurance limiter counts).
 */
export function redisBlockBroadcast(redis: Redis, channel: string): BlockBroadcast & { close(): void } {
  // Queued until connected (the subscription must outlive start-up and outages; ioredis
  // resubscribes after a reconnect); no command timeout on a connection that only listens.
  const sub = redis.duplicate({ enableOfflineQueue: true, commandTimeout: undefined });
  sub.on("error", () => undefined); // the outage is logged once by the request-path client
  return {
    publish: (address, until) => void redis.publish(channel, JSON.stringify({ address, until })).catch(() => undefined),
    subscribe(onBlock) {
      sub.subscribe(channel).catch(() => undefined);
      sub.on("message", (_c: string, msg: string) => {
        const m = safeParse(msg);
        if (typeof m?.address === "string" && typeof m.until === "number") onBlock(m.address, m.until);
      });
    },
    close: () => sub.disconnect(),
  };
}

function safeParse(s: string): { address?: unknown; until?: unknown } | null {
  try {
    return JSON.parse(s);
  } catch {
    return null;
  }
}
