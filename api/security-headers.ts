// Security headers: helmet's defaults, computed once. Helmet's middleware only ever sets fixed
// values (no nonces here), so its output is recorded at start and sent with each response: REST
// bodies take them in their single writeHead (a setHeader per field would push Node's writeHead
// onto its slow path, see output/payload.ts), everything else through setHeader.
import type { IncomingMessage, ServerResponse } from "node:http";
import helmet from "helmet";

export type HeaderSet = Record<string, string>;

/** Helmet's headers; `crossOrigin` (CORS configured) lets other origins read the responses. */
export function securityHeaders(crossOrigin: boolean): HeaderSet {
  const mw = helmet({
    contentSecurityPolicy: {
      // /docs: Redoc runs its search index in a worker created from a blob: URL. No
      // upgrade-insecure-requests: the server speaks plain HTTP (TLS ends in front of it, if at all),
      // and a browser reaching it by a LAN address would ask for the page's scripts over HTTPS.
      directives: { "worker-src": ["'self'", "blob:"], "upgrade-insecure-requests": null },
    },
    crossOriginResourcePolicy: { policy: crossOrigin ? "cross-origin" : "same-origin" },
  });
  const headers: HeaderSet = {};
  const recorder = {
    setHeader: (name: string, value: string | number | readonly string[]) => {
      headers[name] = Array.isArray(value) ? value.join(", ") : String(value);
    },
    removeHeader: (name: string) => void delete headers[name],
  };
  let finished = false;
  mw({} as IncomingMessage, recorder as unknown as ServerResponse, (err?: unknown) => {
    if (err) throw err;
    finished = true;
  });
  if (!finished) throw new Error("helmet did not finish synchronously: its headers cannot be precomputed");
  return headers;
}

export function setAll(res: ServerResponse, headers: HeaderSet): void {
  for (const name in headers) res.setHeader(name, headers[name]);
}
