// The GraphQL response cache answers repeated snapshot-only queries, never across snapshots or
// scope sets, and never for catalog-backed fields.
import { afterAll, beforeAll, expect, it } from "vitest";
import { KEYS } from "./fixture.ts";
import { gql } from "./graphql-helpers.ts";
import { fixtureWithMetrics, startTestServer, type TestServer } from "./helpers.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s?.close());

const Q = `query($n: Int) { stockRatings(first: $n) { edges { node { stock { ticker } totalRating } } } }`;
const tickers = (r: { json: { data: { stockRatings: { edges: { node: { stock: { ticker: string } } }[] } } } }) =>
  r.json.data.stockRatings.edges.map((e) => e.node.stock.ticker);

it("a repeated query gets the same answer; variables are part of the key", async () => {
  const a = await gql(s, Q, { n: 3 });
  const b = await gql(s, Q, { n: 3 });
  // the same body but for the budget left in extensions.cost
  expect(b.json.data).toEqual(a.json.data);
  expect(b.json.extensions.cost.remaining).toBe(a.json.extensions.cost.remaining - a.json.extensions.cost.requested);
  expect(tickers(await gql(s, Q, { n: 4 }))).toHaveLength(4);
});

it("a swapped snapshot is answered from the new snapshot", async () => {
  const before = tickers(await gql(s, Q, { n: 5 }));
  const other = fixtureWithMetrics({ seed: 7, id: "snap-other", stocks: 40, metricTickers: [] });
  const old = s.current.snapshot;
  s.current.snapshot = other.snapshot;
  try {
    const after = tickers(await gql(s, Q, { n: 5 }));
    const rest = (await s.api("stock_ratings", { limit: 5 })).json.map(
      (x: { stock: { ticker: string } }) => x.stock.ticker,
    );
    expect(after).toEqual(rest);
    expect(after).not.toEqual(before);
  } finally {
    s.current.snapshot = old;
  }
});

it("keys with other scopes do not share an answer (the same query, refused first, then answered)", async () => {
  const limited = await gql(s, `{ stock(ticker: "AAPL") { ticker financials { income { fiscalYear } } } }`, undefined, {
    key: KEYS.aliceRatingsOnly,
  });
  expect(limited.json.data.stock.financials).toBeNull();
  expect(limited.json.errors[0].extensions.code).toBe("FORBIDDEN");
  const again = await gql(s, `{ stock(ticker: "AAPL") { ticker financials { income { fiscalYear } } } }`);
  expect(again.json.errors).toBeUndefined();
  expect(again.json.data.stock.financials.income.length).toBeGreaterThan(0);
});

it("catalog-backed queries are built per request", async () => {
  const q = `{ watchlistsForUser { id name } }`;
  const before = await gql(s, q);
  s.catalog.watchlists.set("77", {
    id: "77",
    ownerId: "u1",
    name: "Fresh",
    description: "",
    private: true,
    createdAt: "2015-06-01T00:00:00.000Z",
    tickers: [],
  });
  try {
    const after = await gql(s, q);
    expect(after.json.data.watchlistsForUser.length).toBe(before.json.data.watchlistsForUser.length + 1);
  } finally {
    s.catalog.watchlists.delete("77");
  }
});
