// Failed authentications per client address (rate-limiter-flexible, in memory or shared through
// Redis like the per-key limits). Past the limit the address is refused with 429 until the window
// ends, whatever key it presents: if a right guess still got through, a guesser could tell it
// from the refused ones. Requests that authenticate do not count.
import { RateLimiterRes } from "rate-limiter-flexible";
import { type ApiError, RateLimited } from "./errors.ts";
import { type RateLimitOptions, storeLimiter } from "./rate-limit.ts";

/**
 * Tells the other servers sharing the count that an address went over it, and hears them: a server
 * that never saw the failure over the limit refuses the address too, even the right key, which
 * would otherwise tell a guesser spreading guesses over servers that this one was right.
 */
export interface BlockBroadcast {
  publish(address: string, until: number): void;
  subscribe(onBlock: (address: string, until: number) => void): void;
}

/** Failed authentications allowed per address (`points`) and window; Redis key prefix default rl:auth-fail. */
export type AuthFailureOptions = RateLimitOptions & { broadcast?: BlockBroadcast };

export interface AuthGuard {
  /** Throws 429 while the address is blocked: a Map lookup, so the read path pays next to nothing. */
  check(address: string | undefined): void;
  /** Counts one failure; rejects with `failure` itself, or with 429 when this one went over the limit. */
  fail(address: string | undefined, failure: ApiError): Promise<never>;
}

const MAX_BLOCKED = 10_000;

const refusal = (ms: number) => {
  const sec = Math.max(1, Math.ceil(ms / 1000));
  return new RateLimited(sec, {}, `too many failed authentications from this address; retry after ${sec} s`);
};

export function createAuthGuard(opts: AuthFailureOptions | undefined): AuthGuard | null {
  if (!opts) return null;
  const limiter = storeLimiter(opts, "rl:auth-fail");
  // address → blocked until (ms); known locally once a failure here went over the shared count
  const blocked = new Map<string, number>();
  const block = (address: string, until: number) => {
    if (blocked.size >= MAX_BLOCKED) blocked.clear();
    if (until > (blocked.get(address) ?? 0)) blocked.set(address, until);
  };
  opts.broadcast?.subscribe(block);
  return {
    check(address) {
      if (blocked.size === 0 || address === undefined) return;
      const until = blocked.get(address);
      if (until === undefined) return;
      const left = until - Date.now();
      if (left > 0) throw refusal(left);
      blocked.delete(address);
    },
    async fail(address, failure) {
      if (address === undefined) throw failure;
      try {
        await limiter.consume(address, 1);
      } catch (e) {
        if (!(e instanceof RateLimiterRes)) throw failure; // a store error: do not refuse service for it
        block(address, Date.now() + e.msBeforeNext);
        opts.broadcast?.publish(address, Date.now() + e.msBeforeNext);
        throw refusal(e.msBeforeNext);
      }
      throw failure;
    },
  };
}
