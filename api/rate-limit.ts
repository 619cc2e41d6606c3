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

/**
 * Consumes one point for the key; resolves to the headers, or rejects with RateLimited carrying them.
 * `now`, present when the store is memory only: the same count in the same store, synchronously
 * (returns the headers or throws RateLimited), for the node:http fast path.
 */
export type Limiter = ((keyId: string) => Promise<RateHeaders | undefined>) & {
  now?: (keyId: string) => RateHeaders;
};

type MemoryStore = { incrby(key: string, points: number, durationSec: number): RateLimiterRes };

/**
 * RateLimiterMemory.consume without its promise: rate-limiter-flexible's own steps (without
 * blockDuration and execEvenly, never configured here) on its own store, so both forms count
 * together. null when the limiter is not a memory one of that shape.
 */
function consumeNow(l: RateLimiterAbstract): ((keyId: string, points: number) => RateLimiterRes) | null {
  const store = (l as unknown as { _memoryStorage?: MemoryStore })._memoryStorage;
  if (!(l instanceof RateLimiterMemory) || typeof store?.incrby !== "function") return null;
  return (keyId, points) => {
    const r = store.incrby(l.getKey(keyId), points, l.duration);
    (r as { remainingPoints: number }).remainingPoints = Math.max(l.points - r.consumedPoints, 0);
    return r;
  };
}

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
  const consume: Limiter = (keyId) => limiter.consume(keyId, 1).then(headers, refused);
  const now = consumeNow(limiter);
  if (now !== null)
    consume.now = (keyId) => {
      const r = now(keyId, 1);
      if (r.consumedPoints > opts.points) refused(r);
      return headers(r);
    };
  return consume;
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

/** What spending from a cost budget gives: the key's report, and whether the points were not there. */
export interface CostSpent {
  report: CostReport;
  refused: boolean;
}

/**
 * Spends `points` of the key's budget: resolves to the report, or to `refused: true` (the points
 * were not there). `now`, present when the store is memory only: the same, synchronously.
 */
export type CostBudget = ((keyId: string, points: number) => Promise<CostSpent>) & {
  now?: (keyId: string, points: number) => CostSpent;
};

let lastMs = Number.NaN;
let lastIso = "";
/** An instant as ISO 8601; the same instant again (a window's end, asked by each request in it) is formatted once. */
function isoAt(ms: number): string {
  if (ms !== lastMs) {
    lastIso = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastIso;
}

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
      resetAt: isoAt(Date.now() + r.msBeforeNext),
    },
    refused,
  });
  const spend: CostBudget = (keyId, points) =>
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
  const now = consumeNow(limiter);
  if (now !== null)
    spend.now = (keyId, points) => {
      const r = now(keyId, points);
      return answer(points, r, r.consumedPoints > opts.points);
    };
  return spend;
}
