// Per-key rate limits (rate-limiter-flexible): in memory, or shared through Redis when a client is
// given (with an in-memory insurance limiter, so a Redis outage degrades to per-process limits
// instead of failing requests). Every answer carries X-RateLimit-*; a refusal is 429 + Retry-After.
import type { Redis } from "ioredis";
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import { RateLimited } from "./errors.ts";

export interface RateLimitOptions {
  points: number;
  durationSec: number;
  redis?: Redis;
  /** Redis key prefix (default rl:data-v1): servers sharing it share the limits. */
  prefix?: string;
}

/** X-RateLimit-* header values, sent with the response (kept off `res` until writeHead: see payload.ts). */
export type RateHeaders = Record<"X-RateLimit-Limit" | "X-RateLimit-Remaining" | "X-RateLimit-Reset", string>;

/** Consumes one point for the key; resolves to the headers, or rejects with RateLimited carrying them. */
export type Limiter = (keyId: string) => Promise<RateHeaders | undefined>;

/** `points` per `durationSec` per key, in memory, or in Redis with an in-memory insurance limiter. */
export function storeLimiter(opts: RateLimitOptions, defaultPrefix: string): RateLimiterAbstract {
  const base = { points: opts.points, duration: opts.durationSec, keyPrefix: opts.prefix ?? defaultPrefix };
  return opts.redis
    ? new RateLimiterRedis({ ...base, storeClient: opts.redis, insuranceLimiter: new RateLimiterMemory(base) })
    : new RateLimiterMemory(base);
}

export function createLimiter(opts: RateLimitOptions | undefined): Limiter | null {
  if (!opts) return null;
  const limiter = storeLimiter(opts, "rl:data-v1");
  const limit = String(opts.points);
  const headers = (r: RateLimiterRes): RateHeaders => ({
    "X-RateLimit-Limit": limit,
    "X-RateLimit-Remaining": String(Math.max(0, r.remainingPoints)),
    "X-RateLimit-Reset": String(Math.ceil((Date.now() + r.msBeforeNext) / 1000)),
  });
  const refused = (e: unknown): undefined => {
    if (e instanceof RateLimiterRes) throw new RateLimited(Math.max(1, Math.ceil(e.msBeforeNext / 1000)), headers(e));
    return undefined; // a store error without insurance: do not refuse service for it
  };
  // A plain promise chain (no async wrapper): one reaction per request on the read path.
  return (keyId) => limiter.consume(keyId, 1).then(headers, refused);
}
