// Per-key rate limits (rate-limiter-flexible): in memory, or shared through Redis when a client is
// given (with an in-memory insurance limiter, so a Redis outage degrades to per-process limits
// instead of failing requests). Every answer carries X-RateLimit-*; a refusal is 429 + Retry-After.
import type { Response } from "express";
import type { Redis } from "ioredis";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import { RateLimited } from "./errors.ts";

export interface RateLimitOptions {
  points: number;
  durationSec: number;
  redis?: Redis;
}

export type Limiter = (keyId: string, res: Response) => Promise<void>;

export function createLimiter(opts: RateLimitOptions | undefined): Limiter | null {
  if (!opts) return null;
  const base = { points: opts.points, duration: opts.durationSec, keyPrefix: "rl:data-v1" };
  const limiter: RateLimiterAbstract = opts.redis
    ? new RateLimiterRedis({ ...base, storeClient: opts.redis, insuranceLimiter: new RateLimiterMemory(base) })
    : new RateLimiterMemory(base);
  const limit = String(opts.points);
  const headers = (res: Response, r: RateLimiterRes) => {
    res.setHeader("X-RateLimit-Limit", limit);
    res.setHeader("X-RateLimit-Remaining", String(Math.max(0, r.remainingPoints)));
    res.setHeader("X-RateLimit-Reset", String(Math.ceil((Date.now() + r.msBeforeNext) / 1000)));
  };
  return async (keyId, res) => {
    try {
      headers(res, await limiter.consume(keyId, 1));
    } catch (e) {
      if (e instanceof RateLimiterRes) {
        headers(res, e);
        throw new RateLimited(Math.max(1, Math.ceil(e.msBeforeNext / 1000)));
      }
      // a store error without insurance: do not refuse service for it
    }
  };
}
