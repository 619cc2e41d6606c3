// How an export's bytes reach the client: pieces written with backpressure (and into the export cache's
// file when one is kept), whole files streamed with their length (api/rest/export.ts decides what to send).
import { open } from "node:fs/promises";
import { pipeline } from "node:stream/promises";
import type { Response } from "express";
import type { ExportCacheWriter } from "../../pipeline/store/read/export-cache.ts";

/** Resolves when `res` can take more (drained) or is gone (closed). */
export function writable(res: Response): Promise<void> {
  if (res.destroyed) return Promise.resolve(); // its "close" has been
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}

/**
 * Writes the pieces in order, small ones (metadata, padding) joined and large ones (column buffers)
 * as they are; `flushed` runs once all of them have gone to the socket (or the response failed).
 * Answers false when the response wants a drain first. (Not corked: a corked chunked response
 * reports a full buffer that its socket never signals drained.)
 */
export function writePieces(res: Response, pieces: Uint8Array[], flushed?: () => void): boolean {
  const out: Uint8Array[] = [];
  let small: Uint8Array[] = [];
  const join = () => {
    if (small.length) out.push(small.length === 1 ? small[0] : Buffer.concat(small));
    small = [];
  };
  for (const p of pieces) {
    if (p.byteLength >= 64 << 10) {
      join();
      out.push(p);
    } else small.push(p);
  }
  join();
  let ok = true;
  out.forEach((p, i) => {
    ok = res.write(p, i === out.length - 1 && flushed ? () => flushed() : undefined) && ok;
  });
  if (out.length === 0) flushed?.();
  return ok;
}

/**
 * Writes the pieces to the response and, when one is kept, the cache file; resolves when both can
 * take more (the socket drained, the file written). `flushed` runs once both have the bytes.
 */
export function sendPieces(
  res: Response,
  cache: ExportCacheWriter | null,
  pieces: Uint8Array[],
  flushed?: () => void,
): Promise<unknown> | undefined {
  if (!cache) return writePieces(res, pieces, flushed) ? undefined : writable(res);
  let left = 2;
  const one = () => {
    if (--left === 0) flushed?.();
  };
  const ok = writePieces(res, pieces, one);
  const filed = cache.write(pieces).then(one);
  return ok ? filed : Promise.all([filed, writable(res)]);
}

/** Whether the response went out whole (finished), not cut short by its client. */
export function ended(res: Response): Promise<boolean> {
  if (res.writableFinished || res.destroyed) return Promise.resolve(res.writableFinished);
  return new Promise((resolve) => {
    res.once("finish", () => resolve(true));
    res.once("close", () => resolve(res.writableFinished));
  });
}

/** The file at `path` with its Content-Length, opened before anything is sent (removed meanwhile, still readable). */
export async function sendFile(res: Response, path: string, headers: Record<string, string | number>): Promise<void> {
  const file = await open(path);
  const size = await file.stat().then(
    (st) => st.size,
    (e) => file.close().then(() => Promise.reject(e)),
  );
  headers["Content-Length"] = size;
  res.writeHead(200, headers);
  await pipeline(file.createReadStream(), res); // closes the file when done or failed
}
