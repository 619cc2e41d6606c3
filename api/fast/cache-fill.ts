// Filling the response cache from Express's answers. A REST miss the fast path hands to Express is
// watched: its status and headers are recorded at writeHead, and when it finishes as a 200 of a
// shareable route with a cacheable body (route.ts puts the serialized body in
// res.locals.cacheableBody only for bodies keyed by snapshot and normalised request), the answer is
// kept with its brotli and gzip forms (compressed off the event loop first).
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import type { Scope } from "../../pipeline/store/catalog/types.ts";
import { ENDPOINT_SCOPES } from "../auth.ts";
import type { AnswerCache } from "../output/answer-cache.ts";
import { COMPRESS_MIN_BYTES, compressedAsync } from "../output/compress.ts";
import type { SnapshotRef } from "../resources/snapshot-access.ts";
import { snapshotId } from "../resources/snapshot-access.ts";

/**
 * Routes whose answer depends only on the snapshot, the request and the key's scopes, with the
 * scopes each needs. Not here: watchlists, the caller's portfolios and portfolio-by-id routes
 * (visibility depends on who asks and on the catalog), which Express serves every time.
 */
export const SHAREABLE_ROUTES: ReadonlyMap<string, readonly Scope[]> = new Map<string, readonly Scope[]>([
  ["stock_ratings_list", ENDPOINT_SCOPES.stock_ratings],
  ["stock_ratings_one", ENDPOINT_SCOPES.stock_ratings],
  ["stock_financials", ENDPOINT_SCOPES.stock_financials],
  ["stock_metrics", ENDPOINT_SCOPES.stock_metrics],
  ["stock_performance", ENDPOINT_SCOPES.stock_performance],
  ["benchmarks", ENDPOINT_SCOPES.benchmarks],
  ["portfolios_list", ENDPOINT_SCOPES.portfolios], // only the predefined list is keyed by route.ts
]);

/** First path segments under /data/v1 of the shareable routes: other requests skip the fast path at once. */
export const SHAREABLE_SEGMENTS: ReadonlySet<string> = new Set([
  "stock_ratings",
  "stock_financials",
  "stock_metrics",
  "stock_performance",
  "benchmarks",
  "portfolios",
]);

/** Headers that belong to one response, not to the answer. */
const PER_REQUEST = new Set([
  "x-request-id",
  "x-ratelimit-limit",
  "x-ratelimit-remaining",
  "x-ratelimit-reset",
  "content-length",
  "content-encoding",
]);

/** Only JSON and CSV bodies are cached (streamed and binary formats never). */
const CACHEABLE_TYPE = /^(application\/json|text\/csv)\b/;

type Locals = { locals?: Record<string, unknown> };

export interface FillEnv {
  snapshot: () => SnapshotRef | null;
  answers: AnswerCache;
}

/** Watches a response Express is about to write; a cacheable 200 is kept under `key`. */
export function watchForFill(_req: IncomingMessage, res: ServerResponse, env: FillEnv, sid: string, key: string): void {
  let status = 0;
  let sent: OutgoingHttpHeaders | undefined;
  const writeHead = res.writeHead;
  // biome-ignore lint/suspicious/noExplicitAny: writeHead's overloads, passed through as they came
  res.writeHead = function (this: ServerResponse, code: number, ...rest: any[]) {
    status = code;
    const h = rest[rest.length - 1];
    sent = h !== null && typeof h === "object" && !Array.isArray(h) ? (h as OutgoingHttpHeaders) : undefined;
    return writeHead.call(this, code, ...rest);
  } as typeof res.writeHead;
  res.on("finish", () => {
    const locals = (res as Locals).locals;
    const body = locals?.cacheableBody;
    const scopes = SHAREABLE_ROUTES.get(locals?.route as string);
    if (status !== 200 || sent === undefined || scopes === undefined || !Buffer.isBuffer(body)) return;
    if (body.length > env.answers.maxBodyBytes) return;
    const headers: Record<string, string> = {};
    for (const name in sent) if (!PER_REQUEST.has(name.toLowerCase())) headers[name] = String(sent[name]);
    const etag = headers.ETag;
    if (etag === undefined || !CACHEABLE_TYPE.test(headers["Content-Type"] ?? "")) return;
    const keep = (br?: Buffer, gzip?: Buffer) => {
      const now = env.snapshot();
      if (now === null || snapshotId(now) !== sid) return; // swapped meanwhile: the answer is stale
      env.answers.set(sid, key, {
        kind: "rest",
        route: locals?.route as string,
        scopes,
        etag,
        headers,
        body,
        br,
        gzip,
      });
    };
    if (body.length < COMPRESS_MIN_BYTES) return keep();
    Promise.all([compressedAsync(body, "br"), compressedAsync(body, "gzip")]).then(
      ([br, gzip]) => keep(br, gzip),
      () => undefined, // a failed compression leaves the answer to Express
    );
  });
}
