// Requests Node's HTTP parser refuses before any handler runs (a head over 16 KB, a malformed
// request line, a head that never completes) get the same JSON error body as everything else,
// instead of Node's empty 431/400/408.
import { STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { ApiError } from "./errors.ts";

/** Largest request head accepted (Node's default, fixed here so a runtime flag cannot change it). */
export const MAX_HEADER_BYTES = 16 * 1024;

function errorFor(code: string | undefined): ApiError {
  if (code === "HPE_HEADER_OVERFLOW")
    return new ApiError(431, "headers_too_large", `the request's headers exceed ${MAX_HEADER_BYTES / 1024} KB`);
  if (code === "ERR_HTTP_REQUEST_TIMEOUT")
    return new ApiError(408, "request_timeout", "the request was not received in time");
  return new ApiError(400, "bad_request", "malformed HTTP request");
}

/** The server's `clientError` listener: answers once, then closes the connection. */
export function onClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === "ECONNRESET" || !socket.writable) {
    socket.destroy();
    return;
  }
  const e = errorFor(err.code);
  const body = JSON.stringify(e.toBody());
  socket.end(
    `HTTP/1.1 ${e.status} ${STATUS_CODES[e.status]}\r\nContent-Type: application/json; ` +
      `charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `Cache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
  );
}
