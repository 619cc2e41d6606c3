// Hostile input over a real server on the real stores: a published snapshot read by the lazy
// DuckDB reader and the DuckDB catalog. A NUL or another control character in a parameter is a
// 400 (REST) or BAD_USER_INPUT (GraphQL) naming it, never a 500; quotes are data, stored and read
// back byte for byte; and concurrent creates cannot pass a user's limit of 200 (issue 27).
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReaderSource } from "../../api/resources/reader-source.ts";
import { Catalog, type EmbeddedCatalog } from "../../pipeline/store/catalog/catalog.ts";
import { MAX_OWNED, SCOPES } from "../../pipeline/store/catalog/types.ts";
import { SnapshotReader } from "../../pipeline/store/read/snapshot-reader.ts";
import { sampleStore } from "../sample.ts";
import { gql } from "./graphql-helpers.ts";
import { startTestServer, type TestServer } from "./helpers.ts";

let s: TestServer;
let reader: SnapshotReader;
let catalog: EmbeddedCatalog;
let key: string;
let userId: string;
let portfolioId: string;

beforeAll(async () => {
  const { dataDir, id } = sampleStore();
  reader = await SnapshotReader.open(dataDir, id, { cacheEntries: 8 });
  portfolioId = reader.portfolioIds[0];
  // The store is shared read-only (test/sample.ts): users, keys and portfolios go to a catalog of our own.
  catalog = await Catalog.open(join(mkdtempSync(join(tmpdir(), "hostile-catalog-")), "catalog.duckdb"));
  const user = await catalog.createUser({
    email: "hostile@example.com",
    firstName: "Ann",
    lastName: "Tester",
    phoneNumber: "+1 555 0100",
  });
  userId = user.id;
  key = (await catalog.createKey(user.id, [...SCOPES])).key;
  s = await startTestServer({
    deps: {
      snapshot: () => new ReaderSource(reader),
      catalog,
      catalogWriter: catalog,
      // the 40 concurrent creates below queue on the catalog's one writer: on a loaded machine (or
      // beside another test file) the last may pass the 5 s request deadline, which is not what
      // these tests are about
      graphqlLimits: { timeoutMs: 60_000 },
    },
  });
}, 180_000);
afterAll(async () => {
  await s?.close();
  reader?.close();
  await catalog?.idle();
});

const rest = (path: string) => fetch(`${s.url}/data/v1/${path}`, { headers: { api_key: key } });
const bodyOf = async (r: Response) => ({ status: r.status, json: await r.json() });
const q = (query: string, variables?: object) => gql(s, query, variables, { key });

describe("REST: control characters are a 400 naming the parameter", () => {
  // each endpoint with the query it needs besides the id
  const PORTFOLIO_ENDPOINTS: [string, string][] = [
    ["portfolios", ""],
    ["portfolio_holdings", ""],
    ["portfolio_trades", "?value=100000"],
    ["portfolio_metrics", ""],
    ["portfolio_performance", ""],
  ];

  it("a NUL in a portfolio id, on each of the five portfolio endpoints", async () => {
    for (const [p, query] of PORTFOLIO_ENDPOINTS) {
      const r = await bodyOf(await rest(`${p}/${portfolioId}%00${query}`));
      expect(r.status, p).toBe(400);
      expect(r.json.error.code, p).toBe("invalid_parameter");
      expect(r.json.error.details, p).toEqual([{ param: "id", message: expect.stringMatching(/control characters/) }]);
    }
    // the same requests without the NUL are served: the 400 is the NUL's
    for (const [p, query] of PORTFOLIO_ENDPOINTS)
      expect((await rest(`${p}/${portfolioId}${query}`)).status, p).toBe(200);
  });

  it("a NUL or another control character in a query parameter, known or not", async () => {
    for (const [query, param] of [
      ["search=%00", "search"],
      ["search=ab%01c", "search"],
      ["search=a%0Ab", "search"],
      ["date=2024-01-01%00", "date"],
      ["unknown=%7F", "unknown"],
    ]) {
      const r = await bodyOf(await rest(`stock_ratings?${query}`));
      expect(r.status, query).toBe(400);
      expect(r.json.error.details[0].param, query).toBe(param);
    }
    expect((await rest(`stock_ratings/${reader.companies[0].ticker}%00`)).status).toBe(400);
  });

  it("a quote in a search is data: it matches what contains it (nothing here) and breaks nothing", async () => {
    for (const search of ["O'Brien", "x' or '1'='1", "'; drop table companies; --"]) {
      const r = await bodyOf(await rest(`stock_ratings?search=${encodeURIComponent(search)}`));
      expect(r.status, search).toBe(200);
      // no generated company's ticker or name holds a quote: an injected `or '1'='1'` would list them all
      expect(r.json, search).toEqual([]);
    }
    // and the stocks are all still there
    const all = await bodyOf(await rest("stock_ratings?limit=200"));
    expect(all.status).toBe(200);
    // every stock rated on the latest date (the list's default date)
    expect(all.json.length).toBe((await reader.ratingsOn(reader.ratingDates.at(-1)!)).length);
    expect(all.json.length).toBeGreaterThan(10);
  });
});

describe("GraphQL: control characters are BAD_USER_INPUT naming the argument", () => {
  const badInput = (r: { json: { errors?: { extensions: { code: string; details?: { param: string }[] } }[] } }) => {
    expect(r.json.errors?.length).toBe(1);
    const e = r.json.errors![0];
    expect(e.extensions.code).toBe("BAD_USER_INPUT");
    return e.extensions.details?.map((d) => d.param);
  };

  it("stockRatings(search:) and portfolio(id:) with a NUL, as literals and as variables", async () => {
    expect(badInput(await q('{ stockRatings(search: "\\u0000") { totalCount } }'))).toEqual(["search"]);
    expect(
      badInput(await q("query($s: String) { stockRatings(search: $s) { totalCount } }", { s: "a\u0000" })),
    ).toEqual(["search"]);
    expect(badInput(await q(`{ portfolio(id: "${portfolioId}\\u0000") { id } }`))).toEqual(["id"]);
    expect(badInput(await q("query($id: ID!) { portfolio(id: $id) { id } }", { id: "1\u0000" }))).toEqual(["id"]);
    // without the NUL, served
    const ok = await q(`{ portfolio(id: "${portfolioId}") { id } }`);
    expect(ok.json.errors).toBeUndefined();
    expect(ok.json.data.portfolio.id).toBe(portfolioId);
  });

  it("a watchlist create with a NUL in its name, a profile update with one: refused, nothing stored", async () => {
    const before = catalog.watchlistsOf(userId).length;
    expect(
      badInput(
        await q("mutation($i: CreateWatchlistInput!) { createWatchlist(input: $i) { success } }", {
          i: { name: "bad\u0000name" },
        }),
      ),
    ).toEqual(["input.name"]);
    expect(catalog.watchlistsOf(userId).length).toBe(before);
    for (const field of ["firstName", "lastName", "email", "phoneNumber"]) {
      const r = await q("mutation($i: UpdateProfileInput!) { updateProfile(input: $i) { success } }", {
        i: { [field]: field === "email" ? "a\u0000@example.com" : "x\u0000" },
      });
      expect(badInput(r), field).toEqual([`input.${field}`]);
    }
    expect(catalog.getUser(userId)).toMatchObject({ firstName: "Ann", email: "hostile@example.com" });
  });

  it("a description may span lines (tab, LF, CR) but holds no other control character", async () => {
    const text = "line one\n\tline two\r\nend";
    const ok = await q(
      "mutation($i: CreateWatchlistInput!) { createWatchlist(input: $i) { success watchlist { id description } } }",
      { i: { name: "multi-line", description: text } },
    );
    expect(ok.json.data.createWatchlist.watchlist.description).toBe(text);
    await catalog.deleteWatchlist(ok.json.data.createWatchlist.watchlist.id);
    expect(
      badInput(
        await q("mutation($i: CreateWatchlistInput!) { createWatchlist(input: $i) { success } }", {
          i: { name: "x", description: "bell\u0007" },
        }),
      ),
    ).toEqual(["input.description"]);
    // a line break in a name is refused: names are one line
    expect(
      badInput(
        await q("mutation($i: CreateWatchlistInput!) { createWatchlist(input: $i) { success } }", {
          i: { name: "two\nlines" },
        }),
      ),
    ).toEqual(["input.name"]);
  });

  it("values with single quotes are stored and read back byte for byte", async () => {
    const names = ["O'Brien", "x' or '1'='1", "'); delete from watchlists; --", 'quote " and \\ backslash'];
    for (const name of names) {
      const c = await q(
        "mutation($i: CreateWatchlistInput!) { createWatchlist(input: $i) { success " +
          "watchlist { id name description } } }",
        { i: { name, description: name } },
      );
      const w = c.json.data.createWatchlist.watchlist;
      expect([w.name, w.description], name).toEqual([name, name]);
      // over REST from the catalog's mirror, and from the DuckDB file itself
      const r = await bodyOf(await rest(`watchlists/${w.id}`));
      expect([r.json.name, r.json.description], name).toEqual([name, name]);
      const stored = await catalog.tx((conn) =>
        conn.runAndReadAll("select name, description from watchlists where id = $1", [w.id]),
      );
      expect(stored.getRowsJS(), name).toEqual([[name, name]]);
      await catalog.deleteWatchlist(w.id);
    }
    const p = await q(
      "mutation($i: UpdateProfileInput!) { updateProfile(input: $i) { success profile { lastName } } }",
      {
        i: { lastName: "O'Brien" },
      },
    );
    expect(p.json.data.updateProfile.profile.lastName).toBe("O'Brien");
    expect(catalog.getUser(userId)!.lastName).toBe("O'Brien");
  });
});

describe("values the fuzz suite found answered wrongly (test/fuzz)", () => {
  it("stock.rating(date:) with an impossible or empty date: BAD_USER_INPUT naming date, not a 500", async () => {
    const day = reader.ratingDates.at(-1)!;
    const ticker = (await reader.ratingsOn(day))[0].ticker;
    for (const date of ["2015-02-30", "garbage", "2015-13-45", ""]) {
      const r = await q("query($t: String!, $d: String) { stock(ticker: $t) { rating(date: $d) { date } } }", {
        t: ticker,
        d: date,
      });
      expect(r.json.errors?.[0]?.extensions.code, date).toBe("BAD_USER_INPUT");
      expect(
        r.json.errors[0].extensions.details.map((d: { param: string }) => d.param),
        date,
      ).toEqual(["date"]);
    }
    // a real date is served
    const ok = await q("query($t: String!, $d: String) { stock(ticker: $t) { rating(date: $d) { date } } }", {
      t: ticker,
      d: day,
    });
    expect(ok.json.errors).toBeUndefined();
    expect(ok.json.data.stock.rating.date).toBe(day);
  });

  it("ranges naming an unknown rating is a 400 even with a null bound", async () => {
    for (const ranges of ['{"nope":null}', '{"nope":[1,2]}']) {
      const r = await bodyOf(await rest(`stock_ratings?ranges=${encodeURIComponent(ranges)}`));
      expect(r.status, ranges).toBe(400);
      expect(r.json.error.details[0].param, ranges).toBe("ranges");
      expect(r.json.error.details[0].message, ranges).toMatch(/unknown rating "nope"/);
    }
    // a known rating left open (null) filters nothing
    const open = await bodyOf(
      await rest(`stock_ratings?limit=200&ranges=${encodeURIComponent('{"total_rating":null}')}`),
    );
    const all = await bodyOf(await rest("stock_ratings?limit=200"));
    expect(open.status).toBe(200);
    expect(open.json).toEqual(all.json);
  });
});

describe("per-user limits hold under concurrent writes", () => {
  /** Rows for `owner` straight into the catalog file: `count` of them, ids out of the sequences' way. */
  const fill = (table: "watchlists" | "user_portfolios", count: number) =>
    catalog.tx((conn) =>
      table === "watchlists"
        ? conn.run(
            "insert into watchlists select 'fill-' || i, $1, 'filler ' || i, '', true, now() from range($2) t(i)",
            [userId, count],
          )
        : conn.run(
            `insert into user_portfolios select 'fill-' || i, $1, now(), now(), ` +
              `'{"name":"filler"}' from range($2) t(i)`,
            [userId, count],
          ),
    );

  it("40 watchlist creates at 176 leave exactly 200; the rest are refused with the limit's error", async () => {
    await fill("watchlists", MAX_OWNED - 24 - catalog.watchlistsOf(userId).length);
    expect(catalog.watchlistsOf(userId).length).toBe(MAX_OWNED - 24);
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        q("mutation($i: CreateWatchlistInput!) { createWatchlist(input: $i) { success errors { field messages } } }", {
          i: { name: `race ${i}` },
        }),
      ),
    );
    const out = results.map((r) => r.json.data.createWatchlist);
    expect(out.filter((o) => o.success).length).toBe(24);
    const refused = out.filter((o) => !o.success);
    expect(refused.length).toBe(16);
    for (const o of refused)
      expect(o.errors).toEqual([{ field: "input", messages: [`a user may hold at most ${MAX_OWNED} watchlists`] }]);
    expect(catalog.watchlistsOf(userId).length).toBe(MAX_OWNED);
    const [[n]] = (
      await catalog.tx((conn) =>
        conn.runAndReadAll("select count(*)::integer from watchlists where owner_id = $1", [userId]),
      )
    ).getRowsJS();
    expect(n).toBe(MAX_OWNED);
  }, 120_000);

  it("40 portfolio creates at 176 leave exactly 200", async () => {
    await fill("user_portfolios", MAX_OWNED - 24 - catalog.userPortfoliosOf(userId).length);
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        q("mutation($i: CreatePortfolioInput!) { createPortfolio(input: $i) { success errors { field messages } } }", {
          i: { name: `race ${i}`, rebalanceFrequency: 1, maxStocks: 5 },
        }),
      ),
    );
    const out = results.map((r) => r.json.data.createPortfolio);
    expect(out.filter((o) => o.success).length).toBe(24);
    for (const o of out.filter((x) => !x.success))
      expect(o.errors).toEqual([{ field: "input", messages: [`a user may hold at most ${MAX_OWNED} portfolios`] }]);
    expect(catalog.userPortfoliosOf(userId).length).toBe(MAX_OWNED);
  }, 120_000);
});
