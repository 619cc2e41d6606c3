// GraphQL limits against a real server (issue 27): documents that froze the server are refused
// with 400 naming the limit before validation expands them; the cost table (api/graphql/cost.ts)
// refuses costly documents before they run and spends each query's cost from the key's budget per
// minute (extensions.cost on every answer, 429 when spent); time and answer-size limits; JSON
// bodies for 405 and 415. Timing bounds here are sanity bounds only (the figures are in the
// graphql-limits benchmark): the old answers took 19.3 s (fragment bomb) and 4.7 s (rolling_beta).
import { getIntrospectionQuery } from "graphql";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEYS } from "./fixture.ts";
import { gql } from "./graphql-helpers.ts";
import { fixtureWithMetrics, startTestServer, type TestServer } from "./helpers.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s?.close());

async function timed<T>(f: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now();
  const r = await f();
  return [r, performance.now() - t0];
}

const aliases = (n: number, field: string) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: ${field}`).join(" ")} }`;

describe("documents refused before validation", () => {
  it("a fragment cycle → 400 with graphql-js's cycle error (not a stack overflow)", async () => {
    const r = await gql(s, `{ ...A } fragment A on Query { ...B } fragment B on Query { ...A }`);
    expect(r.status).toBe(400);
    expect(r.json.errors.map((e: { message: string }) => e.message)).toEqual([
      'Cannot spread fragment "A" within itself via "B".',
    ]);
  });

  it("eight fragments each spreading the previous ten times → 400 naming the fields limit", async () => {
    const bomb = [
      "query Q { ...F7 }",
      "fragment F0 on Query { __typename }",
      ...Array.from({ length: 7 }, (_, k) => `fragment F${k + 1} on Query { ${`...F${k} `.repeat(10)}}`),
    ].join("\n");
    const [r, ms] = await timed(() => gql(s, bomb));
    expect(r.status).toBe(400);
    // expanded: ...F7 in the operation is 10^7 __typename; each fragment Fk is also validated on its own (10^k)
    const fields = 10 ** 7 + [0, 1, 2, 3, 4, 5, 6, 7].reduce((n, k) => n + 10 ** k, 0);
    expect(r.json.errors).toEqual([
      {
        message: `the document selects ${fields} fields (fragments expanded), over the limit of 1000`,
        extensions: { code: "QUERY_TOO_COMPLEX", limit: "fields", max: 1000, found: fields },
      },
    ]);
    expect(ms).toBeLessThan(1000);
  });

  it("10,000 repeated fields and 15,000 aliases → 400 naming the token limit", async () => {
    // the aliases in base 36 keep the body (225 KB) under the 256 KiB request limit
    for (const doc of [
      `{ ${"__typename ".repeat(10_000)}}`,
      `{ ${Array.from({ length: 15_000 }, (_, i) => `a${i.toString(36)}:__typename`).join(" ")} }`,
    ]) {
      const [r, ms] = await timed(() => gql(s, doc));
      expect(r.status).toBe(400);
      expect(r.json.errors[0].message).toBe(
        "the document has more than 5000 tokens, the limit: send a shorter document",
      );
      expect(r.json.errors[0].extensions).toEqual({ code: "QUERY_TOO_COMPLEX", limit: "tokens", max: 5000 });
      expect(ms).toBeLessThan(1000);
    }
  });

  it("within the token limit: 51 repeated fields, 201 aliases → 400 naming their limits; 50 and 200 pass", async () => {
    const repeated = (n: number) => `{ ${'stock(ticker: "AAPL") { ticker } '.repeat(n)}}`;
    expect((await gql(s, repeated(51))).json.errors).toBeUndefined(); // 50 repeats of the first
    const over = await gql(s, repeated(52));
    expect(over.status).toBe(400);
    expect(over.json.errors[0].extensions).toEqual({
      code: "QUERY_TOO_COMPLEX",
      limit: "repeatedFields",
      max: 50,
      found: 51,
    });
    expect((await gql(s, aliases(200, "__typename"))).json.errors).toBeUndefined();
    const many = await gql(s, aliases(201, "__typename"));
    expect(many.status).toBe(400);
    expect(many.json.errors[0].extensions).toMatchObject({ limit: "aliases", max: 200, found: 201 });
  });

  it("nesting past 24 levels → 400 naming the limit; 13 to 24 get the depth rule's message", async () => {
    // n levels of stock → ratings → edges → node: 4n + 2 nested fields (counted by hand)
    const deep = (n: number) => {
      let q = "ticker";
      for (let i = 0; i < n; i++) q = `stock { ratings(first: 1) { edges { node { ${q} } } } }`;
      return `{ stock(ticker: "AAPL") { ${q} } }`;
    };
    const [far, ms] = await timed(() => gql(s, deep(150)));
    expect(far.status).toBe(400);
    expect(far.json.errors[0].extensions).toEqual({ code: "QUERY_TOO_COMPLEX", limit: "nesting", max: 24, found: 602 });
    expect(ms).toBeLessThan(1000);
    const near = await gql(s, deep(4)); // 18 levels: past the depth rule's 12, within the pre-scan's 24
    expect(near.status).toBe(400);
    expect(near.json.errors[0].message).toMatch(/exceeds maximum operation depth of 12/);
    // GraphiQL's introspection query nests past 12 but is not counted (__schema's subtree)
    const schema = await gql(s, getIntrospectionQuery());
    expect(schema.json.errors).toBeUndefined();
    expect(schema.json.data.__schema.queryType.name).toBe("Query");
  });
});

describe("cost", () => {
  it("190 rolling_beta aliases are refused by cost (400) before running: nothing spent from the budget", async () => {
    const q = aliases(
      190,
      `stock(ticker: "AAPL") { performance(type: ROLLING_BETA, benchmark: "1") { data { date return } } }`,
    );
    const before = (await gql(s, `{ __typename }`)).json.extensions.cost.remaining;
    const [r, ms] = await timed(() => gql(s, q));
    expect(r.status).toBe(400);
    // cost.ts: each alias stock 1 + performance ROLLING_BETA 1500
    expect(r.json.errors).toEqual([
      {
        message:
          "query cost 285190 is over the limit of 5000 points per request: ask for fewer nodes " +
          "(first) or fewer analytics fields",
        extensions: { code: "COST_LIMIT", cost: 190 * 1501, maxCost: 5000 },
      },
    ]);
    expect(ms).toBeLessThan(1000);
    expect((await gql(s, `{ __typename }`)).json.extensions.cost.remaining).toBe(before); // __typename costs 0
  });

  it("every answer carries extensions.cost {requested, limit, remaining, resetAt} by the table's rules", async () => {
    // 1 (connection) + 3 nodes × (edges 1 + node 1 + stock 1 + sector 1); scalars 0
    const list = `{ stockRatings(first: 3) { edges { node { totalRating stock { ticker sector { name } } } } } }`;
    // stock 1 + performance BOXPLOT 30 + metrics (stored) 20 + metrics(period) 50 + financials 700
    const one =
      `{ stock(ticker: "AAPL") { performance(type: BOXPLOT) { name } metrics { metric } m: metrics(period: ` +
      `1) { metric } financials { type } } }`;
    const a = await gql(s, list);
    const b = await gql(s, one);
    expect(a.json.errors).toBeUndefined();
    expect(b.json.errors).toBeUndefined();
    expect(a.json.extensions.cost).toMatchObject({ requested: 13, limit: 50_000 });
    expect(b.json.extensions.cost).toMatchObject({ requested: 801, limit: 50_000 });
    expect(b.json.extensions.cost.remaining).toBe(a.json.extensions.cost.remaining - 801);
    const reset = Date.parse(b.json.extensions.cost.resetAt);
    expect(reset).toBeGreaterThan(Date.now());
    expect(reset).toBeLessThanOrEqual(Date.now() + 60_000);
  });
});

describe("a key's budget per minute", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer({ deps: { graphqlCostPerMinute: 10 } });
  });
  afterAll(() => t?.close());

  it("spent → 429 with Retry-After, the budget's remaining 0 and its reset time; other keys unaffected", async () => {
    const q = `{ stock(ticker: "AAPL") { rating { totalRating } } }`; // stock 1 + rating 1
    for (let i = 1; i <= 5; i++) {
      const r = await gql(t, q);
      expect(r.status).toBe(200);
      expect(r.json.extensions.cost).toMatchObject({ requested: 2, limit: 10, remaining: 10 - 2 * i });
    }
    const over = await gql(t, q);
    expect(over.status).toBe(429);
    const retry = Number(over.headers.get("retry-after"));
    expect(retry).toBeGreaterThan(0);
    expect(retry).toBeLessThanOrEqual(60);
    expect(over.json.data).toBeUndefined();
    expect(over.json.errors).toEqual([
      {
        message:
          `the api key's GraphQL cost budget of 10 points per minute is spent (this query ` +
          `costs 2); retry after ${retry} s`,
        extensions: {
          code: "RATE_LIMITED",
          cost: { requested: 2, limit: 10, remaining: 0, resetAt: expect.any(String) },
        },
      },
    ]);
    expect(Date.parse(over.json.errors[0].extensions.cost.resetAt)).toBeGreaterThan(Date.now());
    const bob = await gql(t, q, undefined, { key: KEYS.bob });
    expect(bob.status).toBe(200);
    expect(bob.json.extensions.cost.remaining).toBe(8);
  });
});

describe("time and size of one request", () => {
  let t: TestServer;
  afterAll(() => t?.close());

  it("past the time limit: data null and a TIMEOUT error; past the size limit: RESPONSE_TOO_LARGE", async () => {
    t = await startTestServer({ deps: { graphqlLimits: { timeoutMs: 1, maxResponseBytes: 2000 } } });
    const series = aliases(
      3,
      `stock(ticker: "AAPL") { performance(type: ROLLING_BETA, benchmark: "1") { data { date } } }`,
    );
    const slow = await gql(t, series);
    expect(slow.status).toBe(200);
    expect(slow.json.data).toBeNull();
    expect(slow.json.errors[0]).toMatchObject({
      message: "the request ran longer than its 1 ms limit: ask for fewer analytics fields",
      extensions: { code: "TIMEOUT", timeoutMs: 1 },
    });
    const big = await gql(t, `{ stockRatings(first: 100) { edges { node { stock { ticker name } } } } }`);
    expect(big.status).toBe(200);
    expect(big.json.data).toBeNull();
    expect(big.json.errors[0].extensions).toMatchObject({ code: "RESPONSE_TOO_LARGE", maxBytes: 2000 });
    expect(big.json.errors[0].extensions.bytes).toBeGreaterThan(2000);
    expect(big.json.extensions.cost.requested).toBe(1 + 100 * 3);
  });
});

describe("work spread over turns of the event loop", () => {
  it("a series longer than one turn's 1,000 points is answered whole and in order, as REST gives it", async () => {
    const t = await startTestServer({ fx: fixtureWithMetrics({ stocks: 8, days: 1500 }) });
    try {
      const q = `{ stock(ticker: "AAPL") { performance(type: DRAWDOWN) { name data { date return } } } }`;
      const g = await gql(t, q);
      expect(g.json.errors).toBeUndefined();
      const rest = await t.api("stock_performance/AAPL", { type: "drawdown" });
      expect(rest.status).toBe(200);
      const points = g.json.data.stock.performance[0].data;
      expect(points.length).toBeGreaterThan(1000);
      expect(points).toEqual(rest.json[0].data);
    } finally {
      await t.close();
    }
  });
});

describe("refusals without a GraphQL request", () => {
  it("405 and 415 answer JSON errors like every other refusal", async () => {
    const put = await fetch(`${s.url}/graphiql`, {
      method: "PUT",
      headers: { api_key: KEYS.alice, "content-type": "application/json" },
      body: "{}",
    });
    expect(put.status).toBe(405);
    expect(put.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(put.headers.get("allow")).toBe("GET, POST");
    expect(await put.json()).toEqual({
      errors: [{ message: "GraphQL is served on GET and POST only", extensions: { code: "METHOD_NOT_ALLOWED" } }],
    });
    const text = await fetch(`${s.url}/graphiql`, {
      method: "POST",
      headers: { api_key: KEYS.alice, "content-type": "text/plain" },
      body: "{ __typename }",
    });
    expect(text.status).toBe(415);
    expect(text.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect((await text.json()).errors[0]).toMatchObject({
      message: expect.stringMatching(/application\/json/),
      extensions: { code: "UNSUPPORTED_MEDIA_TYPE" },
    });
  });
});
