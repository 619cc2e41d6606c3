// The GraphQL limits as docs/api/limits.md states them, written from the constants the server
// enforces (issue #40: the docs said 400 and 20,000 where the server answered 200 and 5,000). A test
// compares the file's generated block with this text; `npm run docs:limits` rewrites the block.
import { COST_PER_MINUTE, MAX_COST, MAX_RESPONSE_BYTES, MAX_WATCHLISTS, TIMEOUT_MS } from "./cost.ts";
import { MAX_BODY } from "./http-edges.ts";
import { MAX_DEPTH } from "./limits.ts";
import { DOCUMENT_LIMITS, MAX_TOKENS } from "./prescan.ts";

const n = (x: number) => x.toLocaleString("en-US");

/** How a refusal before execution is answered, by the Accept header (GraphQL over HTTP, graphql-http). */
export const REFUSAL_STATUS =
  "HTTP 400 under `Accept: application/graphql-response+json`, HTTP 200 under `Accept: application/json` " +
  "(what GraphQL over HTTP asks of each media type)";

export const LIMITS_BEGIN = "<!-- generated from api/graphql/limits-doc.ts: npm run docs:limits -->";
export const LIMITS_END = "<!-- end of generated block -->";

export function graphqlLimitsMarkdown(): string {
  const d = DOCUMENT_LIMITS;
  const bodyKiB = MAX_BODY / 1024;
  return [
    `- The document: at most ${bodyKiB} KiB, ${n(MAX_TOKENS)} tokens, ${n(d.fields)} fields, ${d.aliases} aliases,`,
    `  ${d.repeatedFields} repeated fields, ${d.fragmentSpreads} fragment spreads, ${d.directives} directives and`,
    `  ${d.nesting} levels of nesting (fragments expanded, counted without expanding them), depth ${MAX_DEPTH}, no`,
    "  fragment cycle. Over any: `QUERY_TOO_COMPLEX` (or the cycle's own message) in milliseconds, before",
    `  anything runs: ${REFUSAL_STATUS}.`,
    "- The cost: scalars 0, objects 1 + their selection, a connection 1 + `first` × its selection,",
    "  `watchlistsForUser` 1 + the caller's own number of watchlists × a watchlist's selection (at most",
    `  ${MAX_WATCHLISTS}), \`financials\` 700, \`metrics\` 20 (50 with \`period\`), a daily \`performance\` series`,
    `  1,500 (heatmap, histogram, yearly returns 75; boxplot 30). One request may cost ${n(MAX_COST)} points: over`,
    `  it, \`COST_LIMIT\` with \`{cost, maxCost}\`, before anything runs: ${REFUSAL_STATUS}.`,
    `- The budget: ${n(COST_PER_MINUTE)} points per api key per minute (\`GRAPHQL_COST_PER_MINUTE\`), shared by`,
    "  every server process through Redis when `REDIS_URL` is set. Each executed answer carries",
    "  `extensions.cost: {requested, limit, remaining, resetAt}`; a spent budget answers 429 `RATE_LIMITED`",
    "  with `Retry-After` and `remaining: 0`.",
    `- Execution stops at ${TIMEOUT_MS / 1000} s (\`data: null\`, \`TIMEOUT\`) and an answer over`,
    `  ${MAX_RESPONSE_BYTES / 1024 / 1024} MiB is not sent (\`data: null\`, \`RESPONSE_TOO_LARGE\`); both HTTP 200,`,
    "  since execution had begun.",
  ].join("\n");
}

/** `text` with its generated block replaced by `block` (the markers kept); null when it has no block. */
export function withLimitsBlock(text: string, block: string): string | null {
  const a = text.indexOf(LIMITS_BEGIN);
  const b = text.indexOf(LIMITS_END);
  if (a < 0 || b < a) return null;
  return `${text.slice(0, a + LIMITS_BEGIN.length)}\n${block}\n${text.slice(b)}`;
}
