// Dispatch under /data/v1 by path segment: one Map lookup on the first segment, then a compare of
// the segment count. Express's router would walk a nested Router and every route's regular
// expression per request; on a cached read that walk cost more than everything the read does.
// Matching keeps Express's routing rules: case-sensitive literal segments, an optional trailing
// slash, percent-decoded parameters (a malformed one is a 400 naming the parameter).
import type { NextFunction, Request, RequestHandler, Response } from "express";
import { InvalidParameter, MethodNotAllowed, NotFound } from "../errors.ts";
import { CONTROL_MESSAGE, hasControl } from "../resources/text-input.ts";

export const REST_PREFIX = "/data/v1";

/** A route's request handler, given the decoded path parameters. */
export type PathHandler = (req: Request, res: Response, path: Record<string, string>) => void | Promise<void>;

export interface DispatchEntry {
  /** Path under the prefix, Express syntax: /stock_ratings/:ticker */
  path: string;
  handle: PathHandler;
}

interface Compiled {
  /** Segments after the first: a literal, or null where a parameter goes. */
  rest: (string | null)[];
  /** Each parameter's name and its index in `rest`. */
  params: [name: string, at: number][];
  handle: PathHandler;
}

function compile(e: DispatchEntry): [string, Compiled] {
  const [first, ...rest] = e.path.split("/").slice(1);
  if (first.startsWith(":")) throw new Error(`route ${e.path}: the first segment must be a literal`);
  const params: [string, number][] = [];
  rest.forEach((seg, i) => {
    if (seg.startsWith(":")) params.push([seg.slice(1), i]);
  });
  return [first, { rest: rest.map((seg) => (seg.startsWith(":") ? null : seg)), params, handle: e.handle }];
}

/** Whether the segments after the first fit the route: same count, literals equal, parameters non-empty. */
function fits(c: Compiled, segments: string[]): boolean {
  if (c.rest.length !== segments.length - 2) return false;
  for (let i = 0; i < c.rest.length; i++) {
    const lit = c.rest[i];
    const seg = segments[i + 2];
    if (lit === null ? seg === "" : lit !== seg) return false;
  }
  return true;
}

function decode(value: string, name: string): string {
  if (value.indexOf("%") < 0) return value;
  let out: string;
  try {
    out = decodeURIComponent(value);
  } catch {
    throw InvalidParameter.one(name, "malformed percent-encoding in the path");
  }
  // a NUL or other control character (%00 …) names nothing we serve (api/README.md)
  if (hasControl(out)) throw InvalidParameter.one(name, CONTROL_MESSAGE);
  return out;
}

/** The methods every route here serves: a path of ours asked with another is a 405 naming them. */
const ALLOW = ["GET", "HEAD"] as const;

/** Express middleware serving GET and HEAD under REST_PREFIX; anything else goes to `next`. */
export function restDispatcher(entries: DispatchEntry[]): RequestHandler {
  const table = new Map<string, Compiled[]>();
  for (const e of entries) {
    const [first, c] = compile(e);
    table.set(first, [...(table.get(first) ?? []), c]);
  }
  const notFound = (req: Request) => new NotFound(`no such endpoint: ${req.method} ${req.path}`);

  return (req: Request, res: Response, next: NextFunction) => {
    const url = req.url;
    if (!url.startsWith(REST_PREFIX)) return next();
    const read = req.method === "GET" || req.method === "HEAD";
    const q = url.indexOf("?");
    let path = q < 0 ? url.slice(REST_PREFIX.length) : url.slice(REST_PREFIX.length, q);
    if (path.length === 0 || path[0] !== "/") return next(); // /data/v1x… is not ours
    if (path.length > 1 && path.endsWith("/")) path = path.slice(0, -1);
    const segments = path.split("/"); // ["", first, ...]
    const route = table.get(segments[1])?.find((c) => fits(c, segments)); // the first registered, as Express
    if (!route) return next(read ? notFound(req) : undefined);
    if (!read) return next(new MethodNotAllowed(req.method, req.path, ALLOW));
    try {
      const params: Record<string, string> = {};
      for (const [name, at] of route.params) params[name] = decode(segments[at + 2], name);
      const done = route.handle(req, res, params);
      if (done) done.catch(next);
    } catch (e) {
      next(e);
    }
  };
}
