// /docs: the API reference, browsable offline. Redoc's standalone bundle comes from node_modules
// (nothing is fetched from elsewhere) and renders /data/v1/openapi.json.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Request, Response } from "express";
import { encodeFor } from "./output/compress.ts";

const PAGE = Buffer.from(
  `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Stock ratings and portfolio data service — API reference</title>
<style>body { margin: 0; padding: 0; }</style>
</head>
<body>
<redoc spec-url="/data/v1/openapi.json"></redoc>
<script src="/docs/redoc.standalone.js"></script>
</body>
</html>
`,
  "utf8",
);

let bundle: Buffer | undefined;
/** Read on first use (1.1 MB): a server nobody browses never loads it. */
const redocBundle = () =>
  (bundle ??= readFileSync(createRequire(import.meta.url).resolve("redoc/bundles/redoc.standalone.js")));

function send(req: Request, res: Response, type: string, body: Buffer, cacheControl: string): void {
  const headers: Record<string, string | number> = { "Content-Type": type, "Cache-Control": cacheControl };
  const out = encodeFor(req, body, headers);
  res.writeHead(200, headers);
  res.end(out);
}

/** GET /docs (also /docs/) and GET /docs/redoc.standalone.js; nothing else under /docs. */
export function docsHandler(req: Request, res: Response, next: () => void): void {
  res.locals.route = "docs";
  if (req.path === "/docs" || req.path === "/docs/") {
    send(req, res, "text/html; charset=utf-8", PAGE, "no-cache");
    return;
  }
  if (req.path === "/docs/redoc.standalone.js") {
    send(req, res, "text/javascript; charset=utf-8", redocBundle(), "public, max-age=86400");
    return;
  }
  next();
}
