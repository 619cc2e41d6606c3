// What `npm start` prints as soon as it listens: where, the API reference, the demo key, and what
// data is served meanwhile; then one line once the published snapshot is served. Written
// straight to stdout as plain text, never through the logger: log lines are collected and
// shipped, and a key must not be in them. The key is shown once; the example takes it by header.
export interface BannerInfo {
  /** e.g. http://127.0.0.1:8080 */
  url: string;
  /** A demo key to show (just created), or null when it came from DEMO_API_KEY. */
  demoKey: string | null;
  /** A line on how to switch sources, when npm start kept another source's snapshot. */
  hint?: string | null;
  /** What is served until the `serving` line: a snapshot loading, or one being built. */
  data?: string | null;
}

export function startBanner({ url, demoKey, hint, data }: BannerInfo): string {
  const key = demoKey
    ? `demo API key (every scope; shown once, never logged): ${demoKey}`
    : "demo API key: the DEMO_API_KEY you set";
  return [
    "",
    `REST API: ${url}/data/v1`,
    `GraphQL: ${url}/graphiql   (GraphiQL in a browser; the key goes in the header api_key)`,
    `API reference: ${url}/docs   (OpenAPI document: ${url}/data/v1/openapi.json)`,
    ...(hint ? [hint] : []),
    ...(data ? [data] : []),
    key,
    `try: curl -H "api_key: $API_KEY" '${url}/data/v1/stock_ratings?limit=5'   (API_KEY=the key above)`,
    "",
    "",
  ].join("\n");
}

/** The line once /healthz serves the published snapshot: data requests answer from then on. */
export const readyLine = (url: string, snapshotId: string) => `serving ${url}/data/v1 (snapshot ${snapshotId})\n`;
