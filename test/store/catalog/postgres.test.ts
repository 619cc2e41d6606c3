// What only the PostgreSQL catalog promises, on the real server (a fresh database per test):
// migrations applied once by replicas starting together; the per-owner cap and unique emails held
// by the database when two replicas (or two bare connections) race; a write through one replica
// shown by another's mirror through LISTEN/NOTIFY, with no refresh called; and the server cut off
// → reads keep serving from the mirror, writes refuse with catalog_unavailable (503), and writes
// work again once it is back.
import { GraphQLError } from "graphql";
import pg from "pg";
import pino from "pino";
import { afterAll, afterEach, expect, it, vi } from "vitest";
import { toApiError } from "../../../api/errors.ts";
import { mapError } from "../../../api/graphql/errors.ts";
import { PgCatalog } from "../../../pipeline/store/catalog/catalog.ts";
import { MIGRATIONS } from "../../../pipeline/store/catalog/pg-migrations.ts";
import { dropDatabases, freshDatabase, relay } from "./pg-fixture.ts";

const opened: PgCatalog[] = [];
async function open(url: string): Promise<PgCatalog> {
  const c = await PgCatalog.open(url);
  opened.push(c);
  return c;
}
afterEach(async () => {
  for (const c of opened.splice(0)) await c.close();
});
afterAll(dropDatabases);

async function sql<T extends pg.QueryResultRow>(url: string, text: string, params: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<T>(text, params)).rows;
  } finally {
    await c.end();
  }
}

it("applies each migration once when replicas start together", async () => {
  const url = await freshDatabase();
  const all = await Promise.all([open(url), open(url), open(url)]);
  expect(all).toHaveLength(3);
  const rows = await sql<{ version: number }>(url, "select version from schema_migrations order by version");
  expect(rows.map((r) => r.version)).toEqual(MIGRATIONS.map((m) => m.version));
  await open(url); // and again later: nothing to apply, no error
});

it("holds the cap of 200 watchlists when two replicas race for the last ten places", async () => {
  const url = await freshDatabase();
  const [a, b] = await Promise.all([open(url), open(url)]);
  await sql(
    url,
    "insert into watchlists select 'fill-' || i, '9', 'f', '', true, now() from generate_series(1, 190) t(i)",
  );
  await Promise.all([a.refresh(), b.refresh()]);
  const tries = Array.from({ length: 24 }, (_, i) => (i % 2 ? a : b).createWatchlist("9", { name: `race ${i}` }));
  const outcomes = await Promise.allSettled(tries);
  const refused = outcomes.filter((o) => o.status === "rejected");
  // 190 + 24 asked, 200 allowed: exactly 10 kept and 14 refused, each as the limit
  expect(outcomes.length - refused.length).toBe(10);
  for (const r of refused) expect((r as PromiseRejectedResult).reason).toMatchObject({ code: "limit" });
  const [{ n }] = await sql<{ n: string }>(url, "select count(*) n from watchlists where owner_id = '9'");
  expect(Number(n)).toBe(200);
});

it("refuses the 201st watchlist in the database: of two open transactions the second waits, then fails", async () => {
  const url = await freshDatabase();
  await open(url); // migrates
  await sql(url, "insert into watchlists select 'f' || i, '9', 'f', '', true, now() from generate_series(1, 199) t(i)");
  const one = new pg.Client({ connectionString: url });
  const two = new pg.Client({ connectionString: url });
  await Promise.all([one.connect(), two.connect()]);
  try {
    const insert = "insert into watchlists values ($1, '9', 'n', '', true, now())";
    await one.query("begin");
    await one.query(insert, ["x1"]);
    await two.query("begin");
    let settled = false;
    const second = two.query(insert, ["x2"]).finally(() => {
      settled = true;
    });
    second.catch(() => undefined);
    await new Promise((r) => setTimeout(r, 300));
    expect(settled).toBe(false); // waiting on the owner's count row
    await one.query("commit");
    await expect(second).rejects.toMatchObject({ code: "23514", constraint: "owned_cap" });
    await two.query("rollback");
  } finally {
    await Promise.all([one.end(), two.end()]);
  }
  const [{ n }] = await sql<{ n: string }>(url, "select count(*) n from watchlists where owner_id = '9'");
  expect(Number(n)).toBe(200);
});

it("gives an email to one of two replicas creating it at once", async () => {
  const url = await freshDatabase();
  const [a, b] = await Promise.all([open(url), open(url)]);
  const person = { email: "same@example.com", firstName: "", lastName: "", phoneNumber: "" };
  const outcomes = await Promise.allSettled([
    a.createUser(person),
    b.createUser({ ...person, email: "SAME@example.com" }),
  ]);
  expect(outcomes.map((o) => o.status).sort()).toEqual(["fulfilled", "rejected"]);
  expect(outcomes.find((o) => o.status === "rejected")).toMatchObject({ reason: { code: "conflict" } });
});

it("shows a write through replica A in replica B's mirror by NOTIFY, with no refresh", async () => {
  const url = await freshDatabase();
  const [a, b] = await Promise.all([open(url), open(url)]);
  const refresh = vi.spyOn(b, "refresh");
  const u = await a.createUser({ email: "n@example.com", firstName: "", lastName: "", phoneNumber: "" });
  const { id, key } = await a.createKey(u.id, ["ratings:read"]);
  const w = await a.createWatchlist(u.id, { name: "seen", tickers: ["MSFT"] });
  await vi.waitFor(() => expect(b.watchlist(w.id)).toEqual(w), { timeout: 5000, interval: 5 });
  expect(b.authenticate(key)?.user).toEqual(u);
  await a.revokeKey(id);
  await vi.waitFor(() => expect(b.authenticate(key)).toBeNull(), { timeout: 5000, interval: 5 });
  expect(refresh).not.toHaveBeenCalled();
});

it("serves reads with the server cut off, refuses writes as unavailable (503), writes again after", async () => {
  const url = await freshDatabase();
  const r = await relay(20_000 + Math.floor(Math.random() * 20_000));
  const c = await open(r.url(url));
  const u = await c.createUser({ email: "cut@example.com", firstName: "", lastName: "", phoneNumber: "" });
  await r.cut();
  expect(c.getUser(u.id)).toEqual(u);
  expect(await c.refresh()).toBe(false);
  const refused = await c.createWatchlist(u.id, { name: "lost?" }).catch((e: unknown) => e);
  expect(refused).toMatchObject({ code: "catalog_unavailable" });
  const api = toApiError(refused);
  expect([api.status, api.code, api.message]).toEqual([
    503,
    "unavailable",
    "the account store is unreachable; nothing was written; retry",
  ]);
  const gql = mapError(new GraphQLError("x", { originalError: refused as Error }), pino({ level: "silent" }), "r");
  expect(gql.extensions).toEqual({ code: "UNAVAILABLE", status: 503 });
  expect(c.watchlistsOf(u.id)).toEqual([]);
  await r.restore();
  const w = await c.createWatchlist(u.id, { name: "after" });
  expect(c.watchlistsOf(u.id)).toEqual([w]);
  const stored = await sql<{ name: string }>(url, "select name from watchlists");
  expect(stored).toEqual([{ name: "after" }]); // the refused write left nothing
  await c.close();
  await r.cut();
});
