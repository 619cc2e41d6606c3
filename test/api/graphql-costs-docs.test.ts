// GraphQL costs a consumer hits, and the docs that state them (issue #40.5): watchlistsForUser is
// costed by the caller's own number of watchlists (an ordinary read passes; 200 watchlists still
// refuse a heavy selection), and docs/api/limits.md and docs/api/graphql.md say what the server does.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { graphqlLimitsMarkdown, LIMITS_BEGIN, LIMITS_END } from "../../api/graphql/limits-doc.ts";
import { KEYS } from "./fixture.ts";
import { gql } from "./graphql-helpers.ts";
import { startTestServer, type TestServer } from "./helpers.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
  // bob holds 200 watchlists (the cap a user may reach): ids 1000..1199
  const t = s.fx.snapshot.companies.map((c) => c.ticker);
  for (let i = 0; i < 200; i++)
    s.catalog.watchlists.set(String(1000 + i), {
      id: String(1000 + i),
      ownerId: "u2",
      name: `w${i}`,
      description: "",
      private: true,
      createdAt: "2015-06-01T10:00:00.000Z",
      tickers: [t[i % t.length]],
    });
});
afterAll(() => s?.close());

const doc = (name: string) => readFileSync(new URL(`../../docs/api/${name}`, import.meta.url), "utf8");
const NATURAL =
  "{ watchlistsForUser { id name items(first: 20) { edges { node { stock { ticker } totalRating } } } } }";

describe("watchlistsForUser cost", () => {
  it("the natural read passes for a caller with one watchlist, costed by that one", async () => {
    const r = await gql(s, NATURAL);
    expect(r.json.errors).toBeUndefined();
    expect(r.json.data.watchlistsForUser).toHaveLength(1);
    // by hand: items = 1 + 20 × (edges 1 + node 1 + stock 1) = 61; the list 1 + 1 watchlist × 61
    expect(r.json.extensions.cost.requested).toBe(62);
  });

  it("the same document for a caller with 200 watchlists costs 1 + 200 × 61 and is refused", async () => {
    const r = await gql(s, NATURAL, undefined, { key: KEYS.bob });
    expect(r.status).toBe(400);
    expect(r.json.errors[0].extensions).toEqual({ code: "COST_LIMIT", cost: 12_201, maxCost: 5000 });
    // and alice's validation, cached for the document, is not reused for bob's (nor the reverse)
    expect((await gql(s, NATURAL)).json.extensions.cost.requested).toBe(62);
  });

  it("a light selection passes even with 200 watchlists: 1 + 200 × (items 1 + 1 × 3) = 801", async () => {
    const r = await gql(
      s,
      "{ watchlistsForUser { id items(first: 1) { edges { node { stock { ticker } } } } } }",
      undefined,
      {
        key: KEYS.bob,
      },
    );
    expect(r.json.errors).toBeUndefined();
    expect(r.json.extensions.cost.requested).toBe(801);
  });
});

describe("the docs say what the server does", () => {
  it("docs/api/limits.md's GraphQL block is the one generated from the constants (npm run docs:limits)", () => {
    const text = doc("limits.md");
    const block = text.slice(text.indexOf(LIMITS_BEGIN) + LIMITS_BEGIN.length, text.indexOf(LIMITS_END)).trim();
    expect(block).toBe(graphqlLimitsMarkdown());
  });

  it("a cost refusal: 400 under graphql-response+json, 200 under application/json, as the docs say", async () => {
    const q = "{ stockRatings(first: 10) { edges { node { stock { ticker performance { name } } } } } }";
    const strict = await gql(s, q);
    expect([strict.status, strict.json.errors[0].extensions.code]).toEqual([400, "COST_LIMIT"]);
    const plain = await fetch(`${s.url}/graphiql`, {
      method: "POST",
      headers: { api_key: KEYS.alice, "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ query: q }),
    });
    expect([plain.status, (await plain.json()).errors[0].extensions.code]).toEqual([200, "COST_LIMIT"]);
    expect(graphqlLimitsMarkdown()).toContain("HTTP 400 under `Accept: application/graphql-response+json`");
    expect(graphqlLimitsMarkdown()).toContain("HTTP 200 under `Accept: application/json`");
  });

  it("docs/api/graphql.md's COST_LIMIT example prints what the server answers to it", async () => {
    const text = doc("graphql.md");
    const query = /await gql\("(\{ stockRatings[^"]*)"\)/.exec(text)?.[1];
    const printed = /^(\d{3}) COST_LIMIT: (.*)$/m.exec(text);
    expect(query).toBeDefined();
    // sent as the example sends it: api_key and content-type, no Accept
    const r = await fetch(`${s.url}/graphiql`, {
      method: "POST",
      headers: { api_key: KEYS.alice, "content-type": "application/json" },
      body: JSON.stringify({ query, variables: {} }),
    });
    const e = (await r.json()).errors[0];
    expect(`${r.status} ${e.extensions.code}: ${e.message}`).toBe(`${printed?.[1]} COST_LIMIT: ${printed?.[2]}`);
  });
});
