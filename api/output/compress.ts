// Response compression (brotli, gzip) for bodies of 1 KiB and more, negotiated by `negotiator`.
// Compressed forms are kept beside the body they came from (a WeakMap keyed by the body Buffer):
// a cached body (output/lru.ts) is compressed once per coding, not on every request, and a
// per-request body's forms go with it. Requests without Accept-Encoding (most API clients and the
// benchmark's load generator) pay one header read.
import type { IncomingMessage } from "node:http";
import { promisify } from "node:util";
import { brotliCompress, brotliCompressSync, constants, gzip, gzipSync } from "node:zlib";
import Negotiator from "negotiator";

export type Coding = "br" | "gzip";

/** Smaller bodies gain little and cost a Vary and a compression each. */
export const COMPRESS_MIN_BYTES = 1024;
const CODINGS = ["br", "gzip", "identity"];
// Brotli quality 5: close to gzip's speed at a smaller size; 11 (the default) takes seconds on a MB.
const BROTLI = { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } };

// negotiator 1.x takes { preferred } (its type definitions predate it)
type WithPreferred = {
  encoding(available: readonly string[], opts: { preferred: readonly string[] }): string | undefined;
};

const negotiated = new Map<string, Coding | null>();
const forms = new WeakMap<Buffer, Partial<Record<Coding, Buffer>>>();
/** Compressions running on libuv's pool, per body and coding: concurrent requests for one cached body share one. */
const pending = new WeakMap<Buffer, Partial<Record<Coding, Promise<Buffer>>>>();
const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress) as (b: Buffer, o: typeof BROTLI) => Promise<Buffer>;

/**
 * Bodies from this size are compressed off the event loop: gzip of a 25-year series (~0.3 MB)
 * costs several ms of CPU, and done synchronously it delayed every request in flight behind it
 * (a fifth of the server's event-loop time under the scale bench's cold load). zlib's output does
 * not depend on how it is driven, so the bytes are the same as gzipSync's / brotliCompressSync's.
 */
export const COMPRESS_OFF_LOOP_BYTES = 32 * 1024;

/** The coding to send `size` bytes in, or null for identity. */
export function codingFor(req: IncomingMessage, size: number): Coding | null {
  const accept = req.headers["accept-encoding"];
  if (size < COMPRESS_MIN_BYTES || accept === undefined) return null;
  // Clients send few distinct Accept-Encoding values: negotiate each once.
  let c = negotiated.get(accept);
  if (c === undefined) {
    const pick = (new Negotiator(req) as WithPreferred).encoding(CODINGS, { preferred: CODINGS }); // equal q: br first
    c = pick === "br" || pick === "gzip" ? pick : null;
    if (negotiated.size >= 256) negotiated.clear();
    if (accept.length <= 256) negotiated.set(accept, c);
  }
  return c;
}

/** `body` in `coding`, compressed once per Buffer. */
export function compressed(body: Buffer, coding: Coding): Buffer {
  let f = forms.get(body);
  if (!f) {
    f = {};
    forms.set(body, f);
  }
  f[coding] ??= coding === "br" ? brotliCompressSync(body, BROTLI) : gzipSync(body);
  return f[coding];
}

/** `body` in `coding`, compressed once per Buffer on libuv's thread pool. */
export function compressedAsync(body: Buffer, coding: Coding): Promise<Buffer> {
  const done = forms.get(body)?.[coding];
  if (done) return Promise.resolve(done);
  let p = pending.get(body);
  if (!p) {
    p = {};
    pending.set(body, p);
  }
  p[coding] ??= (coding === "br" ? brotliAsync(body, BROTLI) : gzipAsync(body)).then((out) => {
    let f = forms.get(body);
    if (!f) {
      f = {};
      forms.set(body, f);
    }
    f[coding] = out;
    delete pending.get(body)?.[coding];
    return out;
  });
  return p[coding];
}

/** As encodeFor; a large body not yet compressed in its coding is compressed off the event loop. */
export function encodeForAsync(
  req: IncomingMessage,
  body: Buffer,
  headers: Record<string, string | number>,
): Buffer | Promise<Buffer> {
  if (body.length < COMPRESS_OFF_LOOP_BYTES) return encodeFor(req, body, headers);
  const coding = codingFor(req, body.length);
  if (!coding || forms.get(body)?.[coding]) return encodeFor(req, body, headers);
  headers["Content-Encoding"] = coding;
  headers.Vary = headers.Vary ? `${headers.Vary}, Accept-Encoding` : "Accept-Encoding";
  return compressedAsync(body, coding).then((out) => {
    headers["Content-Length"] = out.length;
    return out;
  });
}

/**
 * The body to send and the headers that go with it: Content-Length always, Content-Encoding when
 * compressed, and Vary: Accept-Encoding on every body large enough that it could have been.
 */
export function encodeFor(req: IncomingMessage, body: Buffer, headers: Record<string, string | number>): Buffer {
  if (body.length < COMPRESS_MIN_BYTES) {
    headers["Content-Length"] = body.length;
    return body;
  }
  const coding = codingFor(req, body.length);
  const out = coding ? compressed(body, coding) : body;
  if (coding) headers["Content-Encoding"] = coding;
  headers.Vary = headers.Vary ? `${headers.Vary}, Accept-Encoding` : "Accept-Encoding";
  headers["Content-Length"] = out.length;
  return out;
}
