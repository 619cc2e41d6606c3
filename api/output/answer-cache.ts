// The response cache the node:http fast path serves from (api/fast/fast-path.ts), one per app and
// shared by REST and GraphQL: whole answers (status 200, the headers Express sent minus the
// per-request ones, the body and its brotli and gzip forms) of reads whose bytes depend only on
// the snapshot, the normalised request and the key's scopes. Bounded by bytes (lru-cache's
// maxSize over body + compressed forms); every key starts with the snapshot id, and the first
// read or fill on another snapshot drops everything the old one held.
import type { Scope } from "../../pipeline/store/catalog/types.ts";
import { BodyCache } from "./lru.ts";

/** A REST answer: what Express wrote, ready to be written again. */
export interface RestAnswer {
  kind: "rest";
  /** the route's metrics label (res.locals.route) */
  route: string;
  /** scopes the route needs (checked again on every hit) */
  scopes: readonly Scope[];
  etag: string;
  /** headers as Express sent them, without X-Request-Id, X-RateLimit-*, Content-Length, Content-Encoding */
  headers: Record<string, string>;
  body: Buffer;
  br?: Buffer;
  gzip?: Buffer;
}

/** A GraphQL answer: the body without `extensions` (the cost report is per request) and its cost. */
export interface GraphqlAnswer {
  kind: "graphql";
  body: Buffer;
  cost: number;
  /** The cost report's opening, built at the first hit (fast-path.ts `costHead`). */
  costHead?: { requested: number; limit: number; text: string };
}

export type Answer = RestAnswer | GraphqlAnswer;

/** Default byte budget (RESPONSE_CACHE_MB); the largest answer kept is a quarter of it. */
export const DEFAULT_RESPONSE_CACHE_BYTES = 64 * 1024 * 1024;

export class AnswerCache {
  private lru: BodyCache<Answer>;
  private sid: string | null = null;
  /** Answers served by the fast path (the metric api_response_cache_fast_total). */
  fastServed = 0;
  constructor(
    readonly maxBytes = DEFAULT_RESPONSE_CACHE_BYTES,
    maxEntries = 10_000,
  ) {
    this.lru = new BodyCache<Answer>(maxEntries, maxBytes);
  }

  /** Largest body kept (bigger ones are served by Express every time). */
  get maxBodyBytes(): number {
    return Math.floor(this.maxBytes / 8);
  }

  /** Moves to snapshot `sid`: a swap drops every answer of the previous one. */
  private on(sid: string): void {
    if (sid === this.sid) return;
    this.lru.clear();
    this.sid = sid;
  }

  get(sid: string, key: string): Answer | undefined {
    this.on(sid);
    return this.lru.get(key);
  }

  set(sid: string, key: string, answer: Answer): void {
    this.on(sid);
    this.lru.set(key, answer);
  }

  get size(): number {
    return this.lru.size;
  }

  get bytes(): number {
    return this.lru.bytes;
  }
}

const scopeSets = new WeakMap<readonly string[], string>();
/**
 * A key's scopes as one sorted string (the scope set in every cache key), kept per scopes array:
 * the catalog hands out a new key object (and array) when a key changes, never edits one in place.
 */
export function scopeSet(scopes: readonly string[]): string {
  let s = scopeSets.get(scopes);
  if (s === undefined) {
    s = [...scopes].sort().join(",");
    scopeSets.set(scopes, s);
  }
  return s;
}
