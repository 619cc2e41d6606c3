// The operators' area (the queue dashboard): a key holding the `admin` scope, given as the api_key
// query parameter or header, or as the password of HTTP Basic authentication, which a browser
// keeps sending to the dashboard's own API calls once asked for it.
import type { NextFunction, Request, Response } from "express";
import type { CatalogReader } from "../pipeline/store/catalog/types.ts";
import { authenticate, presentedKey, requireScopes } from "./auth.ts";
import { ApiError } from "./errors.ts";

const REALM = 'Basic realm="queue dashboard", charset="UTF-8"';

/** The password of a Basic Authorization header (the user name is ignored). */
export function basicPassword(header: string | undefined): string | undefined {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? "");
  if (!m) return undefined;
  const decoded = Buffer.from(m[1], "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  return colon < 0 ? undefined : decoded.slice(colon + 1) || undefined;
}

export function adminGate(catalog: CatalogReader) {
  return (req: Request, res: Response, next: NextFunction) => {
    res.locals.route = "admin";
    try {
      const caller = authenticate(presentedKey(req) ?? basicPassword(req.headers.authorization), catalog);
      requireScopes(caller, ["admin"]);
      next();
    } catch (e) {
      // A browser asks for the key on a 401; the JSON body says the same for scripts.
      if (e instanceof ApiError && e.status === 401) res.setHeader("WWW-Authenticate", REALM);
      next(e);
    }
  };
}
