// The GraphiQL IDE (ruru, a GraphiQL distribution) for a browser GET on /graphiql: the HTML page
// and its static files are served from ruru's in-memory bundle, never from a CDN. The api_key
// header goes into the IDE's headers editor.
import { createHash } from "node:crypto";
import type { RequestHandler } from "express";
import { type RuruServerConfig, ruruHTML } from "ruru/server";
import { getStaticFile } from "ruru/static";

export const GRAPHQL_PATH = "/graphiql";
const STATIC_PATH = `${GRAPHQL_PATH}/static/`;

/** /graphiql, /graphiql/…, /graphiql?… (not /graphiqlx). */
export function isGraphqlUrl(url: string): boolean {
  if (!url.startsWith(GRAPHQL_PATH)) return false;
  const c = url.charCodeAt(GRAPHQL_PATH.length);
  return Number.isNaN(c) || c === 47 /* / */ || c === 63 /* ? */;
}

let html: string | undefined;
export function idePage(): string {
  return (html ??= ruruHTML({
    endpoint: GRAPHQL_PATH,
    htmlParts: { titleTag: "<title>GraphiQL · stock ratings service</title>" },
    staticPath: STATIC_PATH,
    clientConfig: {
      initialHeaders: JSON.stringify({ api_key: "" }, null, 2),
      initialQuery:
        "# GraphiQL for the stock ratings service: put your key in Headers as api_key.\n{\n  stockRatings(first: 5) {\n    totalCount\n    edges { node { date totalRating stock { ticker name } } }\n  }\n}\n",
    } as RuruServerConfig["clientConfig"],
  }));
}

const cspFor = new Map<string, string>();
/**
 * The IDE page's Content-Security-Policy: the server's policy (security-headers.ts) with the page's
 * inline scripts allowed by their hashes, so the IDE runs without 'unsafe-inline'.
 */
export function ideCsp(base: string): string {
  let csp = cspFor.get(base);
  if (csp === undefined) {
    const hashes = [...idePage().matchAll(/<script[^>]*>([\s\S]*?)<\/script>/g)].map(
      (m) => `'sha256-${createHash("sha256").update(m[1]).digest("base64")}'`,
    );
    const directives = base
      .split(";")
      .map((d) => d.trim())
      .filter(Boolean);
    const others = directives.filter((d) => !d.startsWith("script-src "));
    csp = [...others, `script-src 'self' ${hashes.join(" ")}`].join(";");
    cspFor.set(base, csp);
  }
  return csp;
}

/** Static files of the IDE under /graphiql/static/ (brotli in memory; decompressed for clients without br). */
export const ideStatic: RequestHandler = (req, res, next) => {
  Promise.resolve(
    getStaticFile({
      staticPath: STATIC_PATH,
      urlPath: req.originalUrl,
      acceptEncoding: req.headers["accept-encoding"],
      disallowDevAssets: true,
    }),
  )
    .then((file) => {
      if (!file) return next();
      res.writeHead(200, { ...file.headers, "Cache-Control": "public, max-age=86400" });
      res.end(file.content);
    })
    .catch(next);
};

/** A browser asking for a page (Accept: text/html before any JSON type), not a GraphQL client. */
export function wantsIde(accept: string | undefined): boolean {
  if (!accept) return false;
  const html = accept.indexOf("text/html");
  if (html < 0) return false;
  const json = accept.search(/application\/(graphql-response\+)?json/);
  return json < 0 || html < json;
}
