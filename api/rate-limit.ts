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
    ? new RateLimiterRedis({
        ...base,
        storeClient: opts.redis,
        insuranceLimiter: new RateLimiterMemory(base),
        // a client that is reconnecting gets no command: the insurance counts at once
        rejectIfRedisNotReady: true,
      })
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

/** A key's GraphQL cost budget after a request: what `extensions.cost` reports. */
export interface CostReport {
  /** points of this request */
  requested: number;
  /** the key's points per window */
  limit: number;
  /** points left in the window (0 when refused) */
  remaining: number;
  /** when the window's points are back (ISO 8601) */
  resetAt: string;
}

/** Spends `points` of the key's budget: resolves to the report, or to `refused: true` (the points were not there). */
export type CostBudget = (keyId: string, points: number) => Promise<{ report: CostReport; refused: boolean }>;

/**
 * `points` per `durationSec` per key, spent by each GraphQL request's cost, in the same store as
 * the request limit (Redis when given, so every process spends from one budget). A refused
 * request's points count too (the window is not extended: it resets as it would have).
 */
export function createCostBudget(opts: RateLimitOptions): CostBudget {
  const limiter = storeLimiter(opts, "rl:gql-cost");
  const answer = (requested: number, r: RateLimiterRes, refused: boolean) => ({
    report: {
      requested,
      limit: opts.points,
      remaining: refused ? 0 : Math.max(0, r.remainingPoints),
      resetAt: new Date(Date.now() + r.msBeforeNext).toISOString(),
    },
    refused,
  });
  return (keyId, points) =>
    limiter.consume(keyId, points).then(
      (r) => answer(points, r, false),
      (e: unknown) => {
        if (e instanceof RateLimiterRes) return answer(points, e, true);
        // a store error without insurance: serve (as the request limit does), the budget unknown
        const report = {
          requested: points,
          limit: opts.points,
          remaining: opts.points,
          resetAt: new Date().toISOString(),
        };
        return { report, refused: false };
      },
    );
}
