// Two API servers over one PostgreSQL catalog, each with its own PgCatalog (two replicas), on the
// fixture snapshot: a GraphQL write on server 1 is read over REST on server 2 as soon as its
// notification arrives; an invalid write answers success: false with field errors and writes
// nothing; with PostgreSQL cut off from server 1, its reads keep answering 200 and a write answers
// UNAVAILABLE (503) with nothing written; once PostgreSQL is back, writes go through again.
import pg from "pg";
import { afterAll, beforeAll, expect, it, vi } from "vitest";
import { PgCatalog } from "../../../pipeline/store/catalog/catalog.ts";
import { SCOPES } from "../../../pipeline/store/catalog/types.ts";
import { gql } from "../../api/graphql-helpers.ts";
import { startTestServer, type TestServer } from "../../api/helpers.ts";
import { dropDatabases, freshDatabase, relay } from "./pg-fixture.ts";

let url: string;
let cutter: Awaited<ReturnType<typeof relay>>;
let one: PgCatalog;
let two: PgCatalog;
let s1: TestServer;
let s2: TestServer;
let key: string;

beforeAll(async () => {
  url = await freshDatabase();
  cutter = await relay(20_000 + Math.floor(Math.random() * 20_000));
  one = await PgCatalog.open(cutter.url(url));
  two = await PgCatalog.open(url);
  const u = await one.createUser({ email: "two@example.com", firstName: "T", lastName: "W", phoneNumber: "" });
  key = (await one.createKey(u.id, [...SCOPES])).key;
  s1 = await startTestServer({ deps: { catalog: one, catalogWriter: one } });
  s2 = await startTestServer({ deps: { catalog: two, catalogWriter: two } });
  await vi.waitFor(() => expect(two.authenticate(key)).not.toBeNull(), { timeout: 5000 });
}, 60_000);
afterAll(async () => {
  await s1?.close();
  await s2?.close();
  await one?.close();
  await two?.close();
  await cutter?.cut();
  await dropDatabases();
});

const create = (s: TestServer, name: string, tickers: string[]) =>
  gql(
    s,
    "mutation($i: CreateWatchlistInput!) { createWatchlist(input: $i) { success errors { field messages } " +
      "watchlist { id name } } }",
    { i: { name, stockTickers: tickers } },
    { key },
  );
const rest = (s: TestServer, path: string) => fetch(`${s.url}/data/v1/${path}`, { headers: { api_key: key } });
const stored = async () => {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const { rows } = await c.query("select name from watchlists order by id");
  await c.end();
  return rows.map((r) => r.name);
};

it("a write on server 1 is read on server 2; an invalid one answers field errors and writes nothing", async () => {
  const ticker = s1.fx.snapshot.companies[0].ticker;
  const r = await create(s1, "Replicated", [ticker]);
  expect(r.json.data.createWatchlist).toMatchObject({ success: true, errors: null, watchlist: { name: "Replicated" } });
  const id = r.json.data.createWatchlist.watchlist.id;
  await vi.waitFor(
    async () => {
      const w = await rest(s2, `watchlists/${id}`);
      expect(w.status).toBe(200);
      expect((await w.json()).name).toBe("Replicated");
    },
    { timeout: 5000, interval: 20 },
  );
  const bad = await create(s2, "", ["NOPE_NOT_A_TICKER"]);
  expect(bad.json.data.createWatchlist.success).toBe(false);
  expect(bad.json.data.createWatchlist.errors.map((e: { field: string }) => e.field)).toEqual(["name"]);
  expect(await stored()).toEqual(["Replicated"]);
});

it("PostgreSQL cut off from server 1: reads answer 200, a write UNAVAILABLE (503) with nothing written", async () => {
  const id = one.watchlistsOf(one.allUsers()[0].id)[0].id;
  await cutter.cut();
  try {
    expect((await rest(s1, `watchlists/${id}`)).status).toBe(200);
    const r = await create(s1, "while cut", []);
    expect(r.json.errors[0]).toMatchObject({
      message: "the account store is unreachable; nothing was written; retry",
      extensions: { code: "UNAVAILABLE", status: 503 },
    });
    expect(await stored()).toEqual(["Replicated"]);
  } finally {
    await cutter.restore();
  }
  const again = await create(s1, "after", []);
  expect(again.json.data.createWatchlist.success).toBe(true);
  expect(await stored()).toEqual(["Replicated", "after"]);
});
