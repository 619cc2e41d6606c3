// graphql-jit runs queries; graphql-js's executor is the reference: both give the same result
// (data and errors) for queries across the schema, including scope and not-found errors.
import { execute, parse } from "graphql";
import { describe, expect, it } from "vitest";
import { createContext } from "../../api/graphql/context.ts";
import { executeCompiled } from "../../api/graphql/jit.ts";
import { graphqlSchema } from "../../api/graphql/schema.ts";
import { SCOPES, type Scope } from "../../pipeline/store/catalog/types.ts";
import { buildCatalog, USERS } from "./fixture.ts";
import { fixtureWithMetrics } from "./helpers.ts";

const fx = fixtureWithMetrics({ stocks: 60, metricTickers: ["AAPL"] });
const catalog = buildCatalog(fx);
const ctx = (scopes: readonly Scope[]) =>
  createContext(
    {
      snapshot: fx.snapshot,
      catalog,
      caller: { user: USERS[0], key: { id: "k", userId: "u1", scopes: [...scopes], createdAt: "", revokedAt: null } },
    },
    null,
    null,
  );
const plain = (r: unknown) => JSON.parse(JSON.stringify(r));

const QUERIES: [string, string, Record<string, unknown>?][] = [
  [
    "stock ratings page",
    `query($n: Int) { stockRatings(first: $n, orderBy: "-growth_rating") { totalCount pageInfo { hasNextPage ` +
      `endCursor } edges { cursor node { date stock { id ticker marketCap sector { id name } } ` +
      `totalRating macroRating } } } }`,
    { n: 7 },
  ],
  [
    "stock with history, financials, metrics, performance",
    `{ stock(ticker: "aapl") { ratings(first: 3, descending: true) { edges { node { date totalRating } } } ` +
      `financials(type: TTM) { derived { fiscalYear items { item value number } } } metrics(benchmark: "1") { metric ` +
      `values { column display number } } performance(type: BOXPLOT) { name data { period min median max count } } } }`,
  ],
  [
    "portfolio with holdings and trades",
    `{ portfolio(id: "101") { name status ranges { growthRating } holdings(first: 3, orderBy: "name") { edges { node ` +
      `{ stock { name } totalRating } } } trades(value: 50000, rebalancePeriod: TODAY) { totalCount edges { node { ` +
      `ticker quantity pct } } } } }`,
  ],
  [
    "watchlists, profile, benchmarks",
    `{ watchlistsForUser { id name stockCount items(first: 2) { edges { node { stock { ticker } totalRating } } } } ` +
      `profile { email } benchmarks { id name } }`,
  ],
  [
    "errors: not found, bad argument, unknown benchmark",
    `{ a: stock(ticker: "NOPE") { ticker } b: stockRatings(first: 500) { totalCount } c: portfolio(id: "101") { ` +
      `metrics(benchmark: "x") { metric } } d: benchmarks { id } }`,
  ],
];

describe("graphql-jit against graphql-js", () => {
  for (const [name, q, vars] of QUERIES) {
    it(name, async () => {
      for (const scopes of [SCOPES, ["ratings:read"] as Scope[]]) {
        const args = () => ({
          schema: graphqlSchema(),
          document: parse(q),
          variableValues: vars,
          contextValue: ctx(scopes),
        });
        const reference = plain(await execute(args()));
        const jit = plain(await executeCompiled(args()));
        expect(jit).toEqual(reference);
      }
    });
  }
});
