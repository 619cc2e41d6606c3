// Access log: one pino line per response, written when it finishes. Leaner than pino-http on the
// hot path (no per-request child logger): this line is most of what a cached read costs.
// The logged request is only {id, method, url, remoteAddress, userAgent}, the URL with its
// api_key value redacted; no headers, no query object.
import { randomUUID } from "node:crypto";
import type { NextFunction, Request, Response } from "express";
import type pino from "pino";
import { redactUrl } from "./auth.ts";

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;
const QUIET = new Set(["/metrics", "/healthz"]);

export function accessLog(logger: pino.Logger) {
  return (req: Request, res: Response, next: NextFunction) => {
    const h = req.headers["x-request-id"];
    const id = typeof h === "string" && REQUEST_ID.test(h) ? h : randomUUID();
    (req as Request & { id: string }).id = id;
    res.setHeader("X-Request-Id", id);
    if (!QUIET.has(req.url)) {
      const start = performance.now();
      res.once("finish", () => {
        const status = res.statusCode;
        const level = status >= 500 ? "error" : status >= 400 ? "warn" : "info";
        if (!logger.isLevelEnabled(level)) return;
        logger[level](
          {
            req: { id, method: req.method, url: redactUrl(req.originalUrl), remoteAddress: req.socket.remoteAddress, userAgent: req.headers["user-agent"] },
            res: { statusCode: status },
            responseTime: Math.round(performance.now() - start),
          },
          status >= 500 ? "request errored" : "request completed",
        );
      });
    }
    next();
  };
}
