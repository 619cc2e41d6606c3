// One suite for both implementations of the catalog port: the embedded DuckDB file and PostgreSQL
// (a fresh database per test, on the real server at 127.0.0.1:5432). The expected values are
// written out by hand from the port's contract (pipeline/store/catalog/types.ts): ids from the
// sequences (users and watchlists from 1, portfolios from 5001), tickers upper-cased in insertion
// order without duplicates, MAX_OWNED = 200, a portfolio's failure cleared by its next change.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { hashKey } from "../../../pipeline/store/catalog/api-keys.ts";
import { Catalog, EmbeddedCatalog } from "../../../pipeline/store/catalog/catalog.ts";
import { dropDatabases, freshDatabase } from "./pg-fixture.ts";

const rules = {
  name: "P",
  description: "",
  rebalanceFrequency: 1,
  maxStocks: 3,
  maxStocksCriteria: "total_rating" as const,
  maxStocksCriteriaOrder: "descending" as const,
  maxSectorConcentration: null,
  ranges: { return_rating: [5, 10] as [number, number] },
};
const person = (email: string) => ({ email, firstName: "F", lastName: "L", phoneNumber: "1" });

/** Where a fresh, empty catalog lives for each implementation. */
const stores: [string, () => Promise<string>][] = [
  ["embedded", async () => join(mkdtempSync(join(tmpdir(), "catalog-conf-")), "catalog.duckdb")],
  ["postgres", freshDatabase],
];

/** `n` rows of `owner` straight into the store (a write each through the port would take 200 turns). */
async function fill(c: Catalog, table: "watchlists" | "user_portfolios", owner: string, n: number): Promise<void> {
  const sql =
    table === "watchlists"
      ? "insert into watchlists select 'fill-' || i, $1, 'filler', '', true, now() from generate_series(1, $2) t(i)"
      : "insert into user_portfolios select 'fill-' || i, $1, now(), now(), '{}' from generate_series(1, $2) t(i)";
  if (c instanceof EmbeddedCatalog) await c.tx((conn) => conn.run(sql, [owner, n]));
  else {
    const db = new pg.Client({ connectionString: c.path });
    await db.connect();
    await db.query(sql, [owner, n]);
    await db.query("update catalog_version set v = v + 1");
    await db.end();
  }
  await c.refresh();
}

const opened: Catalog[] = [];
async function open(location: string): Promise<Catalog> {
  const c = await Catalog.at(location);
  opened.push(c);
  return c;
}
afterEach(async () => {
  for (const c of opened.splice(0)) await c.close();
});
afterAll(dropDatabases);

describe.each(stores)("the %s catalog", (kind, fresh) => {
  it("opens as its kind", async () => {
    expect((await open(await fresh())).kind).toBe(kind);
  });

  it("creates users with ids from 1, refuses a taken email in any case, and updates fields", async () => {
    const c = await open(await fresh());
    const a = await c.createUser(person("a@example.com"));
    const b = await c.createUser(person("b@example.com"));
    expect([a.id, b.id]).toEqual(["1", "2"]);
    expect(c.userByEmail("A@EXAMPLE.COM")?.id).toBe("1");
    await expect(c.createUser(person("B@example.com"))).rejects.toMatchObject({ code: "conflict" });
    await expect(c.updateUser("1", { email: "b@example.com" })).rejects.toMatchObject({ code: "conflict" });
    await expect(c.updateUser("99", { firstName: "X" })).rejects.toMatchObject({ code: "not_found" });
    expect(await c.updateUser("1", { firstName: "Ann" })).toEqual({
      ...person("a@example.com"),
      id: "1",
      firstName: "Ann",
    });
    expect(c.allUsers().map((u) => u.email)).toEqual(["a@example.com", "b@example.com"]);
  });

  it("stores keys as their SHA-256, authenticates them, and forgets revoked ones", async () => {
    const c = await open(await fresh());
    const u = await c.createUser(person("k@example.com"));
    await expect(c.createKey(u.id, ["everything"])).rejects.toMatchObject({ code: "invalid" });
    const fixed = "fixed-key-0123456789";
    const k1 = await c.createKey(u.id, ["ratings:read", "ratings:read", "profile:read"], fixed);
    // the id is key_ and the first 12 hex digits of sha256(key)
    expect(k1).toEqual({
      id: `key_${hashKey(fixed).slice(0, 12)}`,
      key: fixed,
      scopes: ["ratings:read", "profile:read"],
    });
    const k2 = await c.createKey(u.id, ["ratings:read"]);
    expect(c.authenticate(fixed)?.user.id).toBe(u.id);
    expect(c.isKeyHash(hashKey(k2.key))).toBe(true);
    expect(await c.revokeKeysOfUserExcept(u.id, k2.id)).toBe(1);
    expect(c.authenticate(fixed)).toBeNull();
    expect(c.isKeyHash(hashKey(fixed))).toBe(true); // revoked keys stay known to the log redaction
    await c.revokeKey(k2.id);
    expect(c.authenticate(k2.key)).toBeNull();
    expect(c.listKeys().map((k) => [k.id, k.revokedAt !== null])).toEqual([
      [k1.id, true],
      [k2.id, true],
    ]);
    await expect(c.revokeKey("key_nope")).rejects.toMatchObject({ code: "not_found" });
  });

  it("keeps watchlists: tickers upper-cased, in order, no duplicates; updates and deletes", async () => {
    const c = await open(await fresh());
    const w = await c.createWatchlist("7", { name: "Tech", tickers: ["msft", "AAPL", "msft"] });
    expect(w).toMatchObject({ id: "1", ownerId: "7", name: "Tech", description: "", private: true });
    expect(w.tickers).toEqual(["MSFT", "AAPL"]);
    expect((await c.addToWatchlist(w.id, ["nvda", "aapl", "IBM"])).tickers).toEqual(["MSFT", "AAPL", "NVDA", "IBM"]);
    expect((await c.removeFromWatchlist(w.id, ["aapl"])).tickers).toEqual(["MSFT", "NVDA", "IBM"]);
    expect((await c.addToWatchlist(w.id, ["AAPL"])).tickers).toEqual(["MSFT", "NVDA", "IBM", "AAPL"]);
    expect(await c.updateWatchlist(w.id, { name: "T2", private: false })).toMatchObject({ name: "T2", private: false });
    await expect(c.addToWatchlist("404", ["X"])).rejects.toMatchObject({ code: "not_found" });
    const w2 = await c.createWatchlist("7", { name: "Second", description: "d", private: false });
    expect(c.watchlistsOf("7").map((x) => x.id)).toEqual(["1", "2"]);
    await c.deleteWatchlist(w.id);
    expect(c.watchlist(w.id)).toBeNull();
    expect(c.watchlistsOf("7")).toEqual([w2]);
  });

  it("refuses the 201st watchlist and portfolio of one owner and writes nothing", async () => {
    const c = await open(await fresh());
    await fill(c, "watchlists", "9", 199);
    await c.createWatchlist("9", { name: "the 200th" });
    await expect(c.createWatchlist("9", { name: "one too many", tickers: ["A"] })).rejects.toMatchObject({
      code: "limit",
      message: "a user may hold at most 200 watchlists",
    });
    expect(c.watchlistsOf("9")).toHaveLength(200);
    expect(c.watchlistsOf("9").some((w) => w.name === "one too many")).toBe(false);
    await c.createWatchlist("10", { name: "another owner's first" }); // the cap is per owner
    await c.deleteWatchlist(c.watchlistsOf("9")[0].id);
    expect((await c.createWatchlist("9", { name: "room again" })).name).toBe("room again");
    await fill(c, "user_portfolios", "9", 200);
    await expect(c.createUserPortfolio("9", rules)).rejects.toMatchObject({
      code: "limit",
      message: "a user may hold at most 200 portfolios",
    });
    expect(c.userPortfoliosOf("9")).toHaveLength(200);
  });

  it("keeps user portfolios from id 5001, their rebalance request times and failures", async () => {
    const where = await fresh();
    const c = await open(where);
    const p = await c.createUserPortfolio("3", rules);
    expect(p).toMatchObject({ ...rules, id: "5001", ownerId: "3" });
    const asked = c.rebalanceRequestedAt(p.id)!;
    expect(Date.parse(asked)).toBeGreaterThan(Date.now() - 60_000);
    await c.recordRebalanceFailure(p.id, asked, "no stocks left");
    expect(c.rebalanceFailure(p.id)).toMatchObject({ requestedAt: asked, reason: "no stocks left" });
    await new Promise((r) => setTimeout(r, 5)); // a later change time
    const p2 = await c.updateUserPortfolio(p.id, { ...p, maxStocks: 5 });
    expect(p2.maxStocks).toBe(5);
    expect(c.rebalanceRequestedAt(p.id)! > asked).toBe(true);
    expect(c.rebalanceFailure(p.id)).toBeNull(); // the change asks again
    const p3 = await c.updateUserPortfolio(p.id, { ...p2, costBps: 25 }); // trading costs ride in the rules
    expect(p3.costBps).toBe(25);
    expect((await open(where)).userPortfolio(p.id)?.costBps).toBe(25);
    await c.recordRebalanceFailure("5999", null, "gone"); // a deleted portfolio: nothing recorded
    expect(c.rebalanceFailure("5999")).toBeNull();
    expect(c.userPortfoliosOf("3").map((x) => x.id)).toEqual(["5001"]);
    await c.deleteUserPortfolio(p.id);
    expect(c.allUserPortfolios()).toEqual([]);
  });

  it("assigns stable ids to names across calls", async () => {
    const c = await open(await fresh());
    const a = await c.assignIds("company", ["MSFT", "AAPL"]);
    const b = await c.assignIdsOfKinds({ company: ["ZZZ", "AAPL", "MSFT"], sector: ["Tech"] });
    expect([a.get("AAPL"), a.get("MSFT")]).toEqual([1, 2]);
    expect([b.company.get("AAPL"), b.company.get("MSFT"), b.company.get("ZZZ"), b.sector.get("Tech")]).toEqual([
      1, 2, 3, 1,
    ]);
  });

  it("persists everything: a second handle on the store reads it, and sees later writes after refresh()", async () => {
    const where = await fresh();
    const c = await open(where);
    const u = await c.createUser(person("p@example.com"));
    const { key } = await c.createKey(u.id, ["watchlists:read"]);
    const w = await c.createWatchlist(u.id, { name: "W", tickers: ["A", "B"] });
    const p = await c.createUserPortfolio(u.id, rules);
    const d = await open(where);
    expect(d.authenticate(key)?.user).toEqual(u);
    expect(d.watchlist(w.id)).toEqual(w);
    expect(d.userPortfolio(p.id)).toEqual(p);
    expect(d.rebalanceRequestedAt(p.id)).toBe(c.rebalanceRequestedAt(p.id));
    await c.addToWatchlist(w.id, ["C"]);
    await d.refresh();
    expect(d.watchlist(w.id)?.tickers).toEqual(["A", "B", "C"]);
    expect(await d.refresh()).toBe(false); // nothing new
  });
});
