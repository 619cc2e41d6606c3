// GraphQL queries at /graphiql over the fixture: the interface's operations as written there,
// everything REST reads (compared with the REST answer of the same server and with the fixture's
// own numbers), Relay paging, and the transport rules (GET, variables, operationName, 401).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RATING_CAMEL, RATING_NAMES } from "../../pipeline/types.ts";
import { KEYS } from "./fixture.ts";
import { gql, gqlGet } from "./graphql-helpers.ts";
import { startTestServer, type TestServer } from "./helpers.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s?.close());

const RATING_FIELDS = RATING_NAMES.map((n) => RATING_CAMEL[n]).join(" ");
const latestDate = () => s.fx.snapshot.ratingDates.at(-1)!;

describe("the interface's operations, as written in section 4.3", () => {
  it("stockRatings(first, orderBy, date) → StockRatingNodeConnection with edges { node }", async () => {
    const date = s.fx.snapshot.ratingDates[2];
    const r = await gql(
      s,
      `{ stockRatings(first: 5, orderBy: "-total_rating", date: "${date}") { edges { node { stock { id name sector { ` +
        `id name } industry { id name } } date totalRating growthRating returnRating riskRating ` +
        `valuationRating technicalRating } } } }`,
    );
    expect(r.status).toBe(200);
    expect(r.json.errors).toBeUndefined();
    const nodes = r.json.data.stockRatings.edges.map((e: { node: unknown }) => e.node);
    // reference: the fixture's rows of that date sorted by total_rating descending, ties by ticker
    const rows = [...s.fx.snapshot.ratingsByDate.get(date)!]
      .sort((a, b) => b.total_rating - a.total_rating || (a.ticker < b.ticker ? -1 : 1))
      .slice(0, 5);
    expect(nodes).toHaveLength(5);
    nodes.forEach((n: Record<string, unknown>, i: number) => {
      const row = rows[i];
      const c = s.fx.snapshot.companyByTicker.get(row.ticker)!;
      expect(n).toEqual({
        stock: {
          id: c.id,
          name: c.name,
          sector: { id: c.sectorId, name: c.sector },
          industry: { id: c.industryId, name: c.industry },
        },
        date,
        totalRating: row.total_rating.toFixed(4),
        growthRating: row.growth_rating.toFixed(4),
        returnRating: row.return_rating.toFixed(4),
        riskRating: row.risk_rating.toFixed(4),
        valuationRating: row.valuation_rating.toFixed(4),
        technicalRating: row.technical_rating.toFixed(4),
      });
    });
  });

  it("watchlistsForUser → the caller's watchlists with id and name", async () => {
    const r = await gql(s, `{ watchlistsForUser { id name } }`);
    expect(r.json.data.watchlistsForUser).toEqual([{ id: "1", name: "Alice tech" }]);
    const bob = await gql(s, `{ watchlistsForUser { id name } }`, undefined, { key: KEYS.bob });
    expect(bob.json.data.watchlistsForUser).toEqual([
      { id: "2", name: "Bob private" },
      { id: "3", name: "Bob public" },
    ]);
  });

  it("profile → email, firstName, lastName, phoneNumber of the key's user", async () => {
    const r = await gql(s, `{ profile { email firstName lastName phoneNumber } }`);
    expect(r.json.errors).toBeUndefined();
    expect(r.json.data).toEqual({
      profile: { email: "alice@example.com", firstName: "Alice", lastName: "A", phoneNumber: "+1 555 0101" },
    });
  });

  it("the default operation is a query; naming it is optional", async () => {
    const anon = await gql(s, `{ profile { email } }`);
    const named = await gql(s, `query Me { profile { email } }`);
    expect(named.json.data).toEqual(anon.json.data);
    expect(named.json.errors).toBeUndefined();
  });
});

describe("variables and operations", () => {
  it("variables typed in the operation header", async () => {
    const q =
      `query Top($n: Int!, $order: String, $date: String) { stockRatings(first: $n, orderBy: $order, date: ` +
      `$date) { edges { node { stock { ticker } } } } }`;
    const r = await gql(s, q, { n: 3, order: "ticker", date: latestDate() });
    const tickers = r.json.data.stockRatings.edges.map(
      (e: { node: { stock: { ticker: string } } }) => e.node.stock.ticker,
    );
    const rest = await s.api("stock_ratings", { limit: 3, order_by: "ticker" });
    expect(tickers).toEqual(rest.json.map((x: { stock: { ticker: string } }) => x.stock.ticker));
    const bad = await gql(s, q, { n: "three" });
    expect(bad.status).toBe(400);
    expect(bad.json.errors[0].message).toMatch(/\$n/);
  });

  it("a document with a query and a mutation runs the one operationName names, and asks for it without", async () => {
    const doc =
      `query Read { profile { email } } mutation Write($id: ID!) { addToWatchlist(input: {watchlistId: ` +
      `$id, stockTickers: ["AMAT"]}) { success } }`;
    const without = await gql(s, doc, { id: "1" });
    expect(without.status).toBe(400);
    expect(without.json.errors[0].message).toMatch(/several operations.*operationName/);
    const read = await gql(s, doc, { id: "1" }, { operationName: "Read" });
    expect(read.json.data).toEqual({ profile: { email: "alice@example.com" } });
    expect(s.catalog.writes.filter((w) => w.startsWith("addToWatchlist"))).toEqual([]); // the mutation did not run
    const write = await gql(s, doc, { id: "1" }, { operationName: "Write" });
    expect(write.json.data).toEqual({ addToWatchlist: { success: true } });
    expect(s.catalog.watchlist("1")!.tickers).toContain("AMAT");
  });

  it("GET runs queries and introspection; a mutation over GET is refused", async () => {
    const intro = await gqlGet(s, { query: "{ __schema { queryType { name } mutationType { name } } }" });
    expect(intro.status).toBe(200);
    expect(intro.json.data.__schema).toEqual({ queryType: { name: "Query" }, mutationType: { name: "Mutation" } });
    const q = await gqlGet(s, {
      query: "query($t: String!) { stock(ticker: $t) { ticker name } }",
      variables: JSON.stringify({ t: "aapl" }),
    });
    expect(q.json.data).toEqual({ stock: { ticker: "AAPL", name: "Apple Inc." } });
    const m = await gqlGet(s, { query: `mutation { deleteWatchlist(input: {watchlistId: "1"}) { success } }` });
    expect(m.status).toBe(405);
    expect(s.catalog.watchlist("1")).not.toBeNull();
  });

  it("absent or unknown key: HTTP 401 with a GraphQL errors body", async () => {
    for (const key of [null, "srk_not_a_key_at_all_000000000000", KEYS.revoked]) {
      const r = await gql(s, `{ profile { email } }`, undefined, { key });
      expect(r.status).toBe(401);
      expect(r.json.data).toBeUndefined();
      expect(r.json.errors).toHaveLength(1);
      expect(r.json.errors[0].extensions.code).toBe("UNAUTHENTICATED");
    }
  });

  it("a browser GET gets the GraphiQL page from local files; its script is served here", async () => {
    const page = await fetch(`${s.url}/graphiql`, { headers: { accept: "text/html,application/xhtml+xml" } });
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/text\/html/);
    expect(html).toMatch(/GraphiQL/);
    expect(html).not.toMatch(/unpkg|jsdelivr|cdnjs|https?:\/\//);
    const js = await fetch(`${s.url}/graphiql/static/ruru.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toMatch(/javascript/);
    expect((await js.text()).length).toBeGreaterThan(10_000);
  });
});

describe("scopes per field", () => {
  it("a field needing a missing scope errors alone, naming the scope; the other fields answer", async () => {
    const r = await gql(s, `{ benchmarks { id } profile { email } stockRatings(first: 1) { totalCount } }`, undefined, {
      key: KEYS.aliceRatingsOnly,
    });
    expect(r.status).toBe(200);
    expect(r.json.data.benchmarks).toEqual([{ id: "1" }]);
    expect(r.json.data.profile).toBeNull();
    expect(r.json.data.stockRatings.totalCount).toBe(s.fx.snapshot.ratingsByDate.get(latestDate())!.length);
    expect(r.json.errors).toHaveLength(1);
    expect(r.json.errors[0].path).toEqual(["profile"]);
    expect(r.json.errors[0].message).toMatch(/profile:read/);
    expect(r.json.errors[0].extensions).toMatchObject({ code: "FORBIDDEN", requiredScopes: ["profile:read"] });
  });

  it("nested analytics of a portfolio need analytics:read besides portfolios:read", async () => {
    const r = await gql(s, `{ portfolio(id: "201") { name metrics { metric } } }`, undefined, {
      key: KEYS.aliceNoAnalytics,
    });
    expect(r.json.data.portfolio).toEqual({ name: "Alice growth", metrics: null });
    expect(r.json.errors[0].path).toEqual(["portfolio", "metrics"]);
    expect(r.json.errors[0].extensions).toMatchObject({
      code: "FORBIDDEN",
      requiredScopes: ["portfolios:read", "analytics:read"],
      missingScopes: ["analytics:read"],
    });
  });

  it("mutations need the write scope", async () => {
    const r = await gql(s, `mutation { createWatchlist(input: {name: "x"}) { success } }`, undefined, {
      key: KEYS.aliceRatingsOnly,
    });
    expect(r.json.data.createWatchlist).toBeNull();
    expect(r.json.errors[0].extensions.requiredScopes).toEqual(["watchlists:write"]);
  });
});

describe("what REST reads, through the same readers", () => {
  it("stockRatings pages with cursors and totalCount match the REST list with offset", async () => {
    const page1 = await gql(
      s,
      `{ stockRatings(first: 3) { totalCount pageInfo { hasNextPage hasPreviousPage endCursor } edges { cursor node ` +
        `{ stock { ticker } totalRating } } } }`,
    );
    const c = page1.json.data.stockRatings;
    expect(c.totalCount).toBe(s.fx.snapshot.ratingsByDate.get(latestDate())!.length);
    expect(c.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false, endCursor: c.edges[2].cursor });
    const page2 = await gql(
      s,
      `query($a: String) { stockRatings(first: 3, after: $a) { pageInfo { hasPreviousPage } edges { node { stock ` +
        `{ ticker } totalRating } } } }`,
      { a: c.pageInfo.endCursor },
    );
    const rest = await s.api("stock_ratings", { limit: 6 });
    const all = [...c.edges, ...page2.json.data.stockRatings.edges].map(
      (e: { node: { stock: { ticker: string }; totalRating: string } }) => [e.node.stock.ticker, e.node.totalRating],
    );
    expect(all).toEqual(
      rest.json.map((x: { stock: { ticker: string }; totalRating: string }) => [x.stock.ticker, x.totalRating]),
    );
    expect(page2.json.data.stockRatings.pageInfo.hasPreviousPage).toBe(true);
  });

  it("search and ranges filter like REST; the last page says there is no next one", async () => {
    const r = await gql(
      s,
      `{ stockRatings(first: 200, search: "app", ranges: {totalRating: [0, 10]}) { totalCount pageInfo { hasNextPage ` +
        `} edges { node { stock { ticker } } } } }`,
    );
    const rest = await s.api("stock_ratings", { search: "app", limit: 200 });
    expect(
      r.json.data.stockRatings.edges.map((e: { node: { stock: { ticker: string } } }) => e.node.stock.ticker),
    ).toEqual(rest.json.map((x: { stock: { ticker: string } }) => x.stock.ticker));
    expect(r.json.data.stockRatings.totalCount).toBe(rest.json.length);
    expect(r.json.data.stockRatings.pageInfo.hasNextPage).toBe(false);
    const ranged = await gql(
      s,
      `{ stockRatings(first: 200, ranges: {returnRating: [8, 10], growthRating: [7, 10]}) { totalCount } }`,
    );
    const restRanged = await s.api("stock_ratings", {
      ranges: "{return_rating:[8,10],growth_rating:[7,10]}",
      limit: 200,
    });
    expect(ranged.json.data.stockRatings.totalCount).toBe(restRanged.json.length);
  });

  it("a list cannot ask for more than 200 nodes; bad arguments name themselves", async () => {
    const over = await gql(s, `{ stockRatings(first: 201) { totalCount } }`);
    expect(over.json.data.stockRatings).toBeNull();
    expect(over.json.errors[0].extensions).toMatchObject({
      code: "BAD_USER_INPUT",
      details: [{ param: "first", message: "must be an integer from 0 to 200" }],
    });
    const order = await gql(s, `{ stockRatings(orderBy: "price") { totalCount } }`);
    expect(order.json.errors[0].extensions.details[0].param).toBe("orderBy");
    const date = await gql(s, `{ stockRatings(date: "2015-02-30") { totalCount } }`);
    expect(date.json.errors[0].extensions.details[0].param).toBe("date");
    const before = await gql(s, `{ stockRatings(date: "2000-01-01") { totalCount } }`);
    expect(before.json.errors[0].extensions.code).toBe("NOT_FOUND");
    const cursor = await gql(s, `{ stockRatings(after: "nonsense") { totalCount } }`);
    expect(cursor.json.errors[0].extensions.details[0].param).toBe("after");
  });

  it("a stock with its rating history, financials, metrics (display and number) and performance", async () => {
    const t = s.fx.snapshot.companies[0].ticker;
    const r = await gql(
      s,
      `{ stock(ticker: "${t.toLowerCase()}") { ticker marketCap ratings(first: 200) { totalCount edges { node { date ` +
        `totalRating } } } financials(type: QUARTERLY) { income { fiscalYear fiscalPeriod reportDate items { item ` +
        `value number } } } metrics(benchmark: "1") { metric values { column display number } } performance(type: ` +
        `MONTHLY_HEATMAP) { name data { date year month return } } } }`,
    );
    expect(r.json.errors).toBeUndefined();
    const st = r.json.data.stock;
    const hist = s.fx.snapshot.ratingDates
      .map((d) => s.fx.snapshot.ratingsByDate.get(d)!.find((x) => x.ticker === t))
      .filter((x) => x);
    expect(st.ratings.totalCount).toBe(hist.length);
    expect(
      st.ratings.edges.map((e: { node: { date: string; totalRating: string } }) => [e.node.date, e.node.totalRating]),
    ).toEqual(hist.map((h) => [h!.date, h!.total_rating.toFixed(4)]));
    const fin = (await s.api(`stock_financials/${t}`, { type: "quarterly" })).json;
    expect(st.financials.income[0]).toMatchObject({ fiscalYear: 2014, fiscalPeriod: "Q4", reportDate: "2014-12-31" });
    expect(st.financials.income[0].items).toContainEqual({
      item: "Revenue",
      value: String(fin.stockIncomeQuarterlyData[0].Revenue),
      number: fin.stockIncomeQuarterlyData[0].Revenue,
    });
    const metrics = (await s.api(`stock_metrics/${t}`, { benchmark: "1" })).json as Record<string, string>[];
    expect(st.metrics.map((m: { metric: string }) => m.metric)).toEqual(metrics.map((m) => m.metric));
    const cum = st.metrics.find((m: { metric: string }) => m.metric === "Cumulative Return ");
    const restCum = metrics.find((m) => m.metric === "Cumulative Return ")!;
    expect(cum.values[0]).toEqual({
      column: t,
      display: restCum[t],
      number: Number((Number(restCum[t].replace(/[,%]/g, "")) / 100).toPrecision(12)),
    });
    expect(cum.values[1].column).toBe("Equal Weight Index");
    const start = st.metrics.find((m: { metric: string }) => m.metric === "Start Period");
    expect(start.values[0].number).toBeNull();
    const perf = (await s.api(`stock_performance/${t}`, { type: "monthly_heatmap" })).json;
    expect(st.performance).toEqual(perf);
  });

  it("a predefined portfolio with holdings, trades, metrics and performance equal to REST's", async () => {
    const r = await gql(
      s,
      `{ portfolio(id: "101") { id owner { id } private maxSectorConcentration ranges { growthRating totalRating }
      status rebalanceRequestedAt
      holdings(first: 200, orderBy: "-total_rating") { totalCount edges { node { date stock { ticker } totalRating } } }
      trades(value: 100000, allowFractional: true, first: 200) {
        edges { node { date id ticker name price quantity value pct orderType } } }
      metrics(period: 0.5) { metric values { display } }
      performance(type: ROLLING_BETA, benchmark: "1") { name window data { date return } } } }`,
    );
    expect(r.json.errors).toBeUndefined();
    const p = r.json.data.portfolio;
    expect(p).toMatchObject({
      id: "101",
      owner: { id: "system" },
      private: false,
      maxSectorConcentration: "0.30",
      ranges: { growthRating: [3, 10], totalRating: null },
      status: "READY",
      rebalanceRequestedAt: null,
    });
    const holdings = (await s.api("portfolio_holdings/101", { order_by: "-total_rating", limit: 200 })).json;
    expect(p.holdings.totalCount).toBe(holdings.length);
    expect(
      p.holdings.edges.map((e: { node: { stock: { ticker: string }; totalRating: string; date: string } }) => [
        e.node.date,
        e.node.stock.ticker,
        e.node.totalRating,
      ]),
    ).toEqual(
      holdings.map((h: { date: string; stock: { ticker: string }; totalRating: string }) => [
        h.date,
        h.stock.ticker,
        h.totalRating,
      ]),
    );
    const trades = (await s.api("portfolio_trades/101", { value: 100000, allow_fractional: "true" })).json;
    expect(p.trades.edges.map((e: { node: Record<string, unknown> }) => e.node)).toEqual(
      trades.map(({ order_type, ...t }: Record<string, unknown>) => ({ ...t, orderType: order_type })),
    );
    const metrics = (await s.api("portfolio_metrics/101", { period: 0.5 })).json;
    expect(p.metrics.map((m: { values: { display: string }[] }) => m.values[0].display)).toEqual(
      metrics.map((m: Record<string, string>) => m.Portfolio),
    );
    const perf = (await s.api("portfolio_performance/101", { type: "rolling_beta", benchmark: "1" })).json;
    expect(p.performance).toEqual(perf);
  });

  it("portfolios(private) lists the caller's or the predefined ones; another user's one is not found", async () => {
    const mine = await gql(
      s,
      `{ portfolios { totalCount edges { node { id owner { id } } } } predefined: portfolios(private: ` +
        `false) { edges { node { id } } } }`,
    );
    expect(mine.json.data.portfolios).toEqual({ totalCount: 1, edges: [{ node: { id: "201", owner: { id: "u1" } } }] });
    expect(mine.json.data.predefined.edges).toEqual([{ node: { id: "101" } }]);
    const other = await gql(s, `{ portfolio(id: "202") { id } }`);
    expect(other.json.data.portfolio).toBeNull();
    expect(other.json.errors[0].extensions.code).toBe("NOT_FOUND");
    const rest = await s.api("portfolios/202");
    expect(rest.status).toBe(404);
  });

  it("watchlists with items; another user's private watchlist is not found, a public one is visible", async () => {
    const r = await gql(
      s,
      `{ watchlist(id: "1") { id name description private createdAt stockCount items(first: 200, orderBy: ` +
        `"-total_rating") { totalCount edges { node { stock { ticker sector { id name } } ${RATING_FIELDS} } } } } }`,
    );
    const rest1 = (await s.api("watchlists/1")).json;
    const restItems = (await s.api("watchlist_items/1", { order_by: "-total_rating", limit: 200 })).json;
    const w = r.json.data.watchlist;
    expect({
      id: w.id,
      name: w.name,
      description: w.description,
      private: w.private,
      createdAt: w.createdAt,
      stockCount: w.stockCount,
    }).toEqual(rest1);
    expect(w.items.totalCount).toBe(restItems.length);
    expect(w.items.edges.map((e: { node: Record<string, unknown> }) => e.node)).toEqual(
      restItems.map((i: { stock: { ticker: string; sector: unknown } } & Record<string, unknown>) => ({
        ...i,
        stock: { ticker: i.stock.ticker, sector: i.stock.sector },
      })),
    );
    const bobPrivate = await gql(s, `{ watchlist(id: "2") { id } }`);
    expect(bobPrivate.json.errors[0].extensions.code).toBe("NOT_FOUND");
    const bobPublic = await gql(s, `{ watchlist(id: "3") { name } }`);
    expect(bobPublic.json.data.watchlist).toEqual({ name: "Bob public" });
  });

  it("benchmarks need any valid key; rolling_beta without a benchmark names the parameter", async () => {
    const r = await gql(s, `{ benchmarks { id name description rebalanceFrequency } }`, undefined, {
      key: KEYS.aliceRatingsOnly,
    });
    expect(r.json.data.benchmarks).toEqual((await s.api("benchmarks")).json);
    const beta = await gql(s, `{ portfolio(id: "101") { performance(type: ROLLING_BETA) { name } } }`);
    expect(beta.json.errors[0].extensions.details).toEqual([
      { param: "benchmark", message: "rolling_beta requires benchmark" },
    ]);
    const unknown = await gql(s, `{ portfolio(id: "101") { metrics(benchmark: "99") { metric } } }`);
    expect(unknown.json.errors[0].extensions.details[0].param).toBe("benchmark");
  });
});

describe("limits", () => {
  it("a query deeper than the limit is refused with a clear error, before running", async () => {
    const deep = (n: number): string =>
      n === 0 ? "ticker" : `ratings(first: 1) { edges { node { stock { ${deep(n - 1)} } } } }`;
    const ok = await gql(s, `{ stock(ticker: "AAPL") { ${deep(2)} } }`); // depth 10
    expect(ok.json.errors).toBeUndefined();
    const r = await gql(s, `{ stock(ticker: "AAPL") { ${deep(3)} } }`); // depth 14
    expect(r.json.data).toBeUndefined();
    expect(r.status).toBe(400);
    expect(r.json.errors[0].message).toMatch(/exceeds maximum operation depth/);
  });

  it("with Accept: application/json a refused document answers 200 with errors only (GraphQL over HTTP)", async () => {
    const r = await gql(s, `{ stockRatings { nope } }`, undefined, { headers: { accept: "application/json" } });
    expect(r.status).toBe(200);
    expect(r.json.data).toBeUndefined();
    expect(r.json.errors[0].message).toMatch(/nope/);
  });

  it("a query costing more than the limit is refused naming its cost", async () => {
    const r = await gql(s, `{ stocks(first: 200) { edges { node { metrics { metric } performance { name } } } } }`);
    expect(r.status).toBe(400);
    // api/graphql/cost.ts: 1 + 200 × (edges 1 + node (1 + metrics 20 + performance CUMULATIVE_RETURN 1500))
    expect(r.json.errors[0].extensions).toEqual({ code: "COST_LIMIT", maxCost: 5000, cost: 1 + 200 * 1522 });
  });

  it("GraphiQL's introspection query is not limited by depth", async () => {
    const { getIntrospectionQuery } = await import("graphql");
    const r = await gql(s, getIntrospectionQuery());
    expect(r.status).toBe(200);
    expect(r.json.data.__schema.types.length).toBeGreaterThan(30);
  });
});
