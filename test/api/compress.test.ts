// Large bodies are compressed off the event loop (output/compress.ts): the bytes must be the ones
// the synchronous path sends, so a response does not change with the size it crosses.
import type { IncomingMessage } from "node:http";
import { brotliCompressSync, constants, gunzipSync, gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { COMPRESS_OFF_LOOP_BYTES, encodeFor, encodeForAsync } from "../../api/output/compress.ts";

const req = (accept: string) => ({ headers: { "accept-encoding": accept } }) as unknown as IncomingMessage;
/** A JSON-like body well above the off-loop size, not trivially compressible. */
function body(seed: number): Buffer {
  const parts: string[] = [];
  let x = seed;
  for (let i = 0; parts.join(",").length < COMPRESS_OFF_LOOP_BYTES * 3; i++) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    parts.push(
      `{"date":"20${10 + (i % 15)}-01-${String(1 + (i % 28)).padStart(2, "0")}","value":${(x / 2 ** 31).toFixed(6)}}`,
    );
  }
  return Buffer.from(`[${parts.join(",")}]`);
}

describe("compression off the event loop", () => {
  it("sends the same bytes and headers as the synchronous path (gzip and br)", async () => {
    const b = body(7);
    expect(b.length).toBeGreaterThanOrEqual(COMPRESS_OFF_LOOP_BYTES);
    for (const [accept, coding, sync] of [
      ["gzip", "gzip", gzipSync(b)],
      ["br", "br", brotliCompressSync(b, { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } })],
    ] as const) {
      const h: Record<string, string | number> = { ETag: "x" };
      const out = encodeForAsync(req(accept), b, h);
      expect(out).toBeInstanceOf(Promise); // first time: off the loop
      const bytes = await out;
      expect(bytes.equals(sync)).toBe(true);
      expect(h).toEqual({
        ETag: "x",
        "Content-Encoding": coding,
        Vary: "Accept-Encoding",
        "Content-Length": sync.length,
      });
      // the synchronous path over a fresh copy of the body: same headers in the same order
      const h2: Record<string, string | number> = { ETag: "x" };
      expect(encodeFor(req(accept), Buffer.from(b), h2).equals(sync)).toBe(true);
      expect(Object.entries(h2)).toEqual(Object.entries(h));
      // the form is kept: the next request for the same (cached) body is answered synchronously
      const h3: Record<string, string | number> = {};
      const again = encodeForAsync(req(accept), b, h3);
      expect(Buffer.isBuffer(again) && again.equals(sync)).toBe(true);
    }
  });

  it("concurrent requests for one body share one compression; identity and small bodies stay synchronous", async () => {
    const b = body(11);
    const [x, y] = [encodeForAsync(req("gzip"), b, {}), encodeForAsync(req("gzip"), b, {})];
    const [bx, by] = await Promise.all([x, y]);
    expect(bx).toBe(by);
    expect(gunzipSync(bx).equals(b)).toBe(true);
    const plain: Record<string, string | number> = {};
    expect(encodeForAsync(req("identity"), b, plain)).toBe(b);
    expect(plain).toEqual({ Vary: "Accept-Encoding", "Content-Length": b.length });
    const small = Buffer.from("x".repeat(2000));
    expect(Buffer.isBuffer(encodeForAsync(req("gzip"), small, {}))).toBe(true);
  });
});
