// The GraphiQL IDE (ruru, a GraphiQL distribution) for a browser GET on /graphiql: the HTML page
// and its static files are served from ruru's in-memory bundle, never from a CDN. The page asks for
// the API key, then starts the IDE with it in the api_key header (its headers editor).
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

// Every request, the schema's introspection included, needs a key: opened without one, the IDE
// greeted the user with UNAUTHENTICATED and "Error fetching schema". So the page asks for the key
// first and starts the IDE with it in the api_key header.
const KEY_FORM = `
  <form id="api-key-form" style="position:fixed;inset:0;z-index:10;display:flex;flex-direction:column;gap:.6em;
    align-items:center;justify-content:center;background:#fff;font:16px system-ui,sans-serif">
    <label for="api-key">API key for GraphiQL (sent as the <code>api_key</code> header)</label>
    <input id="api-key" name="api_key" type="password" autocomplete="off" required autofocus size="48" />
    <button type="submit">Open GraphiQL</button>
    <p style="color:#555">The schema and every query need a key; <code>npm start</code> prints a demo key.</p>
  </form>`;
const START_WITH_KEY = `
    <script type="module">
      import { React, createRoot, Ruru } from ${JSON.stringify(`${STATIC_PATH}ruru.js`)};
      const form = document.getElementById("api-key-form");
      form.addEventListener("submit", (e) => {
        e.preventDefault();
        const key = form.elements.api_key.value.trim();
        if (!key) return;
        form.remove();
        // The IDE fetches the schema before its headers editor exists: such a request gets the key
        // here; one whose headers name a key (edited by the user) keeps its own.
        const endpoint = new URL(RURU_CONFIG.endpoint, location.href).href;
        const fetch0 = window.fetch.bind(window);
        window.fetch = (input, init = {}) => {
          const url = new URL(input instanceof Request ? input.url : String(input), location.href).href;
          if (url !== endpoint) return fetch0(input, init);
          const headers = new Headers(init.headers ?? (input instanceof Request ? input.headers : undefined));
          if (!headers.has("api_key")) headers.set("api_key", key);
          return fetch0(input, { ...init, headers });
        };
        const initialHeaders = JSON.stringify({ api_key: key }, null, 2);
        const root = createRoot(document.getElementById("ruru-root"));
        root.render(React.createElement(Ruru, { ...RURU_CONFIG, initialHeaders }));
      });
    </script>`;

let html: string | undefined;
export function idePage(): string {
  html ??= ruruHTML({
    endpoint: GRAPHQL_PATH,
    htmlParts: {
      titleTag: "<title>GraphiQL · stock ratings service</title>",
      bodyContent: (original) => KEY_FORM + original,
      bodyInitScript: START_WITH_KEY,
    },
    staticPath: STATIC_PATH,
    clientConfig: {
      initialQuery:
        "# GraphiQL for the stock ratings service: your key is in Headers as api_key.\n{\n  stockRatings(first: 5) " +
        "{\n    totalCount\n    edges { node { date totalRating stock { ticker name } } }\n  }\n}\n",
    } as RuruServerConfig["clientConfig"],
  });
  return html;
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
