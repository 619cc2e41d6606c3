// The web app (web/, built into dist/web/ by `npm run build`): index.html at `/`, its bundle under
// /web/. Static files only: the app reads the public REST and GraphQL interface like any client,
// so it needs no endpoint of its own. Files are read once, on first request, and compressed once
// per coding (output/compress.ts keeps the compressed forms beside each buffer).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { Request, Response } from "express";
import { NotFound } from "./errors.ts";
import { encodeFor } from "./output/compress.ts";

// From the sources (api/) the bundle is ../dist/web; from the build (dist/api/) it is ../web.
const DIR = [join(import.meta.dirname, "..", "dist", "web"), join(import.meta.dirname, "..", "web")].find((d) =>
  existsSync(join(d, "app.js")),
);

const TYPES: Record<string, string> = {
  "index.html": "text/html; charset=utf-8",
  "app.js": "text/javascript; charset=utf-8",
  "app.css": "text/css; charset=utf-8",
  "app.js.map": "application/json; charset=utf-8",
  "app.css.map": "application/json; charset=utf-8",
};
const files = new Map<string, Buffer>();

function file(name: string): Buffer {
  if (!DIR) throw new NotFound("the web app is not built: run npm run build");
  let b = files.get(name);
  if (!b) {
    b = readFileSync(join(DIR, name));
    files.set(name, b);
  }
  return b;
}

/** GET / (the app's page) and GET /web/<file> (its bundle); anything else under /web is a 404. */
export function webHandler(req: Request, res: Response): void {
  res.locals.route = "web";
  const name = req.path === "/" ? "index.html" : req.path.replace(/^\/web\//, "");
  if (!(name in TYPES)) throw new NotFound(`no such file: ${req.path}`);
  const body = file(name);
  // no-cache: revalidated on each load, so a rebuilt bundle is never mixed with an old page
  const headers: Record<string, string | number> = { "Content-Type": TYPES[name], "Cache-Control": "no-cache" };
  const out = encodeFor(req, body, headers);
  res.writeHead(200, headers);
  res.end(out);
}
