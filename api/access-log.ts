// Access log: one pino line per response, written when it finishes. Leaner than pino-http on the
// hot path (no per-request child logger). Lines are formatted in batches: a finished response
// only queues its few fields, and the queue is written at the end of the event-loop turn, where
// pino's code and data stay hot across many lines (one line at a time, interleaved with the HTTP
// stack, cost several times more). Request metrics ride on the same `finish` listener.
// The logged request is only {id, method, url, remoteAddress, userAgent}, the URL with its
// api_key value and every key the store knows (by hash, wherever it stands) redacted; no headers,
// no query object.
import { randomBytes } from "node:crypto";
import type { Request, Response } from "express";
import type pino from "pino";
import { clientAddress } from "./client-address.ts";
import { type IsKeyHash, redactUrl } from "./redact.ts";
import { REST_PREFIX } from "./rest/dispatch.ts";

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;
const QUIET = new Set(["/metrics", "/healthz"]);
// Enough to tell a browser from curl or a client library; a whole user agent (100+ characters)
// made every info line long.
const USER_AGENT_CHARS = 40;

// Generated ids: a random per-process prefix and a counter. Unique across processes and restarts
// like a UUID, at a fraction of the cost per request.
const ID_PREFIX = `${randomBytes(6).toString("base64url")}-`;
let idSeq = 0;

/** The request id the access log gave this request (kept in res.locals: adding a property to the
 * request object itself is a slow-path store, as Express has changed its prototype). */
export const requestId = (res: Response): string => res.locals.requestId as string;

/** Called once per finished response with its latency in milliseconds. */
export type OnFinish = (req: Request, res: Response, ms: number) => void;

interface Line {
  id: string;
  method: string;
  url: string;
  remoteAddress: string | undefined;
  userAgent: string | undefined;
  status: number;
  ms: number;
}

function write(logger: pino.Logger, l: Line, isKeyHash: IsKeyHash | undefined): void {
  const level = l.status >= 500 ? "error" : l.status >= 400 ? "warn" : "info";
  if (!logger.isLevelEnabled(level)) return;
  logger[level](
    {
      req: {
        id: l.id,
        method: l.method,
        url: redactUrl(l.url, isKeyHash),
        remoteAddress: l.remoteAddress,
        userAgent: l.userAgent,
      },
      res: { statusCode: l.status },
      responseTime: Math.round(l.ms),
    },
    l.status >= 500 ? "request errored" : "request completed",
  );
}

/**
 * Starts the record of one request: its id now, the log line and onFinish when the response is done.
 * `isKeyHash`: the store's known keys, redacted from the URL wherever they stand; `trustProxy`: the
 * proxy hops whose X-Forwarded-For entry is logged as the client's address (api/client-address.ts).
 */
export function accessLog(logger: pino.Logger, onFinish: OnFinish, isKeyHash?: IsKeyHash, trustProxy = 0) {
  let queue: Line[] = [];
  const flush = () => {
    const lines = queue;
    queue = [];
    for (const l of lines) write(logger, l, isKeyHash);
  };
  // idInHead: the caller writes X-Request-Id in its own writeHead (the fast path: api/fast/header-blocks.ts)
  return (req: Request, res: Response, idInHead?: boolean): void => {
    const h = req.headers["x-request-id"];
    const id = typeof h === "string" && REQUEST_ID.test(h) ? h : ID_PREFIX + (++idSeq).toString(36);
    res.locals.requestId = id;
    // REST responses carry the id in their single writeHead (see output/payload.ts); the rest here.
    if (idInHead !== true && !req.url.startsWith(REST_PREFIX)) res.setHeader("X-Request-Id", id);
    const start = performance.now();
    // `finish` fires once; on() spares the wrapper once() allocates per request.
    res.on("finish", () => {
      const ms = performance.now() - start;
      onFinish(req, res, ms);
      if (QUIET.has(req.url)) return;
      if (queue.length === 0) setImmediate(flush);
      queue.push({
        id,
        method: req.method,
        url: req.originalUrl ?? req.url, // the fast path's requests never met Express
        remoteAddress: clientAddress(req, trustProxy),
        userAgent: req.headers["user-agent"]?.slice(0, USER_AGENT_CHARS),
        status: res.statusCode,
        ms,
      });
    });
  };
}
