// GraphQL mutations over the fixture's in-memory catalog: payload shape, all-or-nothing stock
// changes, validation like portfolios.json, another user's objects "not found" with nothing
// written, the rebalance port called per portfolio change, and writes visible to REST at once.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { KEYS } from "./fixture.ts";
import { gql } from "./graphql-helpers.ts";
import { startTestServer, type TestServer } from "./helpers.ts";

let s: TestServer;
const rebalances: string[] = [];
beforeAll(async () => {
  s = await startTestServer({ requestRebalance: (id) => rebalances.push(id) });
});
afterAll(() => s?.close());
beforeEach(() => {
  rebalances.length = 0;
  s.catalog.writes.length = 0;
});

const tickersOf = async (id: string) =>
  ((await s.api(`watchlist_items/${id}`, { limit: 200 })).json as { stock: { ticker: string } }[]).map(
    (x) => x.stock.ticker,
  );
const companies = () => s.fx.snapshot.companies;

describe("watchlists", () => {
  it("addToWatchlist: success, errors null, seen by REST at once; a stock already there is not repeated", async () => {
    const before = await tickersOf("1");
    const [a, b] = companies()
      .filter((c) => !before.includes(c.ticker))
      .slice(5, 7);
    const r = await gql(
      s,
      `mutation($in: AddToWatchlistInput!) { addToWatchlist(input: $in) { success errors { field messages } ` +
        `clientMutationId watchlist { id stockCount } } }`,
      {
        in: { watchlistId: "1", stockTickers: [a.ticker.toLowerCase()], stockIds: [b.id], clientMutationId: "m1" },
      },
    );
    expect(r.json.data.addToWatchlist).toEqual({
      success: true,
      errors: null,
      clientMutationId: "m1",
      watchlist: { id: "1", stockCount: before.length + 2 },
    });
    const after = await tickersOf("1");
    expect(after.sort()).toEqual([...before, a.ticker, b.ticker].sort());
    const again = await gql(
      s,
      `mutation { addToWatchlist(input: {watchlistId: "1", stockTickers: ["${a.ticker}", "${a.ticker}"]}) ` +
        `{ success errors { field } } }`,
    );
    expect(again.json.data.addToWatchlist).toEqual({ success: true, errors: null });
    expect(await tickersOf("1")).toEqual(after);
  });

  it("addToWatchlist is all-or-nothing: one unknown ticker or id, or neither list, adds nothing", async () => {
    const before = await tickersOf("1");
    const fresh = companies().find((c) => !before.includes(c.ticker))!;
    const unknown = await gql(
      s,
      `mutation { addToWatchlist(input: {watchlistId: "1", stockTickers: ["${fresh.ticker}", "ZZZZQ"], stockIds: ` +
        `["nope"]}) { success errors { field messages } watchlist { id } } }`,
    );
    expect(unknown.json.data.addToWatchlist).toEqual({
      success: false,
      errors: [
        { field: "stockTickers", messages: ['unknown ticker "ZZZZQ"'] },
        { field: "stockIds", messages: ['unknown stock id "nope"'] },
      ],
      watchlist: null,
    });
    const none = await gql(
      s,
      `mutation { addToWatchlist(input: {watchlistId: "1"}) { success errors { field messages } } }`,
    );
    expect(none.json.data.addToWatchlist.success).toBe(false);
    expect(none.json.data.addToWatchlist.errors[0].messages[0]).toMatch(/at least one of stockTickers and stockIds/);
    expect(await tickersOf("1")).toEqual(before);
    expect(s.catalog.writes).toEqual([]);
  });

  it("removeFromWatchlist removes all named stocks or none", async () => {
    const before = await tickersOf("1");
    const bad = await gql(
      s,
      `mutation { removeFromWatchlist(input: {watchlistId: "1", stockTickers: ["${before[0]}", ` +
        `"${companies().find((c) => !before.includes(c.ticker))!.ticker}"]}) { success errors { field } } }`,
    );
    expect(bad.json.data.removeFromWatchlist).toEqual({ success: false, errors: [{ field: "stockTickers" }] });
    expect(await tickersOf("1")).toEqual(before);
    const id = s.fx.snapshot.companyByTicker.get(before[1])!.id;
    const ok = await gql(
      s,
      `mutation { removeFromWatchlist(input: {watchlistId: "1", stockTickers: ["${before[0]}"], stockIds: ` +
        `["${id}"]}) { success watchlist { stockCount } } }`,
    );
    expect(ok.json.data.removeFromWatchlist).toEqual({ success: true, watchlist: { stockCount: before.length - 2 } });
    expect(await tickersOf("1")).toEqual(before.slice(2));
  });

  it("create, update and delete a watchlist; REST sees each step", async () => {
    const t = companies()
      .slice(0, 3)
      .map((c) => c.ticker);
    const c = await gql(
      s,
      `mutation { createWatchlist(input: {name: "Mine", description: "three", stockTickers: ${JSON.stringify(t)}}) { ` +
        `success watchlist { id name private stockCount } } }`,
    );
    const w = c.json.data.createWatchlist.watchlist;
    expect(w).toMatchObject({ name: "Mine", private: true, stockCount: 3 });
    expect((await s.api(`watchlists/${w.id}`)).json).toMatchObject({
      id: w.id,
      name: "Mine",
      description: "three",
      private: true,
      stockCount: 3,
    });
    const u = await gql(
      s,
      `mutation { updateWatchlist(input: {watchlistId: "${w.id}", name: "Renamed", private: false}) { success ` +
        `watchlist { name private description } } }`,
    );
    expect(u.json.data.updateWatchlist).toEqual({
      success: true,
      watchlist: { name: "Renamed", private: false, description: "three" },
    });
    expect((await s.api(`watchlists/${w.id}`, {}, {})).json.name).toBe("Renamed");
    const empty = await gql(
      s,
      `mutation { updateWatchlist(input: {watchlistId: "${w.id}", name: "  "}) { success errors { field messages } } }`,
    );
    expect(empty.json.data.updateWatchlist).toEqual({
      success: false,
      errors: [{ field: "name", messages: ["must not be empty"] }],
    });
    const d = await gql(
      s,
      `mutation { deleteWatchlist(input: {watchlistId: "${w.id}"}) { success deletedWatchlistId } }`,
    );
    expect(d.json.data.deleteWatchlist).toEqual({ success: true, deletedWatchlistId: w.id });
    expect((await s.api(`watchlists/${w.id}`)).status).toBe(404);
  });

  it("another user's watchlist, even a public one, is not found and nothing is written", async () => {
    for (const id of ["2", "3", "999"]) {
      for (const m of [
        `addToWatchlist(input: {watchlistId: "${id}", stockTickers: ["AAPL"]}) { success errors { field messages } }`,
        `removeFromWatchlist(input: {watchlistId: "${id}", stockTickers: ["AAPL"]}) { ` +
          `success errors { field messages } }`,
        `updateWatchlist(input: {watchlistId: "${id}", name: "mine now"}) { success errors { field messages } }`,
        `deleteWatchlist(input: {watchlistId: "${id}"}) { success errors { field messages } }`,
      ]) {
        const r = await gql(s, `mutation { ${m} }`);
        const payload = Object.values(r.json.data)[0];
        expect(payload).toEqual({
          success: false,
          errors: [{ field: "watchlistId", messages: [`unknown watchlist ${id}`] }],
        });
      }
    }
    expect(s.catalog.writes).toEqual([]);
    expect(s.catalog.watchlist("3")!.name).toBe("Bob public");
  });
});

describe("portfolios", () => {
  it("createPortfolio validates like portfolios.json, asks for a rebalance; the portfolio reads PENDING", async () => {
    const r = await gql(
      s,
      `mutation { createPortfolio(input: {name: "Momentum", rebalanceFrequency: 2, maxStocks: 6, ` +
        `maxSectorConcentration: 0.5, ranges: {returnRating: [4, 10]}}) { success errors { field messages } ` +
        `portfolio { id owner { id } private status rebalanceRequestedAt maxStocksCriteria maxStocksCriteriaOrder ` +
        `maxSectorConcentration ranges { returnRating } holdings { totalCount } } } }`,
    );
    const p = r.json.data.createPortfolio.portfolio;
    expect(r.json.data.createPortfolio.success).toBe(true);
    expect(p).toMatchObject({
      owner: { id: "u1" },
      private: true,
      status: "PENDING",
      maxStocksCriteria: "total_rating",
      maxStocksCriteriaOrder: "descending",
      maxSectorConcentration: "0.50",
      ranges: { returnRating: [4, 10] },
      holdings: { totalCount: 0 },
    });
    expect(Date.parse(p.rebalanceRequestedAt)).toBeGreaterThan(Date.now() - 60_000);
    expect(rebalances).toEqual([p.id]);
    const rest = await s.api(`portfolios/${p.id}`);
    expect(rest.json).toMatchObject({
      id: p.id,
      name: "Momentum",
      rebalanceFrequency: 2,
      maxStocks: 6,
      nextRebalanceDate: null,
    });
    const mine = (await s.api("portfolios")).json.map((x: { id: string }) => x.id);
    expect(mine).toContain(p.id);
  });

  it("invalid rules: success false with one entry per field, nothing created", async () => {
    const r = await gql(
      s,
      `mutation { createPortfolio(input: {name: "", rebalanceFrequency: 0, maxStocks: 5, maxStocksCriteria: "price", ` +
        `maxSectorConcentration: 1.5, ranges: {growthRating: [8, 2]}}) { success errors { field ` +
        `messages } portfolio { id } } }`,
    );
    const out = r.json.data.createPortfolio;
    expect(out.success).toBe(false);
    expect(out.portfolio).toBeNull();
    expect(out.errors.map((e: { field: string }) => e.field).sort()).toEqual([
      "maxSectorConcentration",
      "maxStocksCriteria",
      "name",
      "ranges.growthRating",
      "rebalanceFrequency",
    ]);
    expect(out.errors.find((e: { field: string }) => e.field === "ranges.growthRating").messages).toEqual([
      "min must not exceed max",
    ]);
    expect(s.catalog.writes).toEqual([]);
    expect(rebalances).toEqual([]);
  });

  it("updatePortfolio changes just the given fields (ranges whole), asks to rebalance; delete drops it", async () => {
    const c = await gql(
      s,
      `mutation { createPortfolio(input: {name: "To change", rebalanceFrequency: 1, maxStocks: 4, ` +
        `maxSectorConcentration: 0.5, ranges: {totalRating: [1, 9]}}) { portfolio { id } } }`,
    );
    const id = c.json.data.createPortfolio.portfolio.id;
    const u = await gql(
      s,
      `mutation { updatePortfolio(input: {portfolioId: "${id}", maxStocks: 7, ranges: {riskRating: [0, 5]}}) { ` +
        `success errors { field messages } portfolio { name maxStocks maxSectorConcentration ranges { ` +
        `totalRating riskRating } status } } }`,
    );
    expect(u.json.data.updatePortfolio).toEqual({
      success: true,
      errors: null,
      portfolio: {
        name: "To change",
        maxStocks: 7,
        maxSectorConcentration: "0.50",
        ranges: { totalRating: null, riskRating: [0, 5] },
        status: "PENDING",
      },
    });
    const clear = await gql(
      s,
      `mutation { updatePortfolio(input: {portfolioId: "${id}", maxSectorConcentration: null}) { portfolio ` +
        `{ maxSectorConcentration } } }`,
    );
    expect(clear.json.data.updatePortfolio.portfolio.maxSectorConcentration).toBeNull();
    const d = await gql(
      s,
      `mutation { deletePortfolio(input: {portfolioId: "${id}"}) { success deletedPortfolioId } }`,
    );
    expect(d.json.data.deletePortfolio).toEqual({ success: true, deletedPortfolioId: id });
    expect(rebalances).toEqual([id, id, id, id]);
    expect((await s.api(`portfolios/${id}`)).status).toBe(404);
  });

  it("costBps: 0 to 500, default 0 and stored only when set; a change of it asks to rebalance", async () => {
    const field = "success errors { field messages } portfolio { id costBps status }";
    const create = (rest: string) =>
      gql(s, `mutation { createPortfolio(input: {rebalanceFrequency: 1, maxStocks: 3, ${rest}}) { ${field} } }`);
    const bad = await create(`name: "C", costBps: 501`);
    expect(bad.json.data.createPortfolio.success).toBe(false);
    expect(bad.json.data.createPortfolio.errors.map((e: { field: string }) => e.field)).toEqual(["costBps"]);
    const none = await create(`name: "C0"`);
    const id0 = none.json.data.createPortfolio.portfolio.id;
    expect(none.json.data.createPortfolio.portfolio.costBps).toBe(0);
    expect("costBps" in s.catalog.userPortfolio(id0)!).toBe(false); // the rules text of a portfolio without costs
    const c = await create(`name: "C", costBps: 12.5`);
    const id = c.json.data.createPortfolio.portfolio.id;
    expect(c.json.data.createPortfolio.portfolio).toMatchObject({ costBps: 12.5, status: "PENDING" });
    expect(s.catalog.userPortfolio(id)!.costBps).toBe(12.5);
    expect((await s.api(`portfolios/${id}`)).json.costBps).toBe(12.5);
    expect((await s.api(`portfolios/${id0}`)).json).not.toHaveProperty("costBps");
    const u = await gql(s, `mutation { updatePortfolio(input: {portfolioId: "${id}", costBps: 0}) { ${field} } }`);
    expect(u.json.data.updatePortfolio.portfolio.costBps).toBe(0);
    expect("costBps" in s.catalog.userPortfolio(id)!).toBe(false);
    expect(rebalances).toEqual([id0, id, id]);
  });

  it("another user's portfolio and predefined ones: not found for update and delete; nothing is written", async () => {
    for (const id of ["202", "101", "9999"]) {
      const u = await gql(
        s,
        `mutation { updatePortfolio(input: {portfolioId: "${id}", name: "hijack"}) { success ` +
          `errors { field messages } } }`,
      );
      expect(u.json.data.updatePortfolio).toEqual({
        success: false,
        errors: [{ field: "portfolioId", messages: [`unknown portfolio ${id}`] }],
      });
      const d = await gql(s, `mutation { deletePortfolio(input: {portfolioId: "${id}"}) { success } }`);
      expect(d.json.data.deletePortfolio.success).toBe(false);
    }
    expect(s.catalog.writes).toEqual([]);
    expect(rebalances).toEqual([]);
    expect(s.catalog.userPortfolio("202")!.name).toBe("Bob value");
    const bobSees = await gql(s, `{ portfolio(id: "202") { name } }`, undefined, { key: KEYS.bob });
    expect(bobSees.json.data.portfolio.name).toBe("Bob value");
  });
});

describe("profile", () => {
  it("updateProfile changes the given fields; an email of another user is refused", async () => {
    const r = await gql(
      s,
      `mutation { updateProfile(input: {firstName: "Alicia", phoneNumber: "+1 555 0199"}) { success profile { email ` +
        `firstName lastName phoneNumber } } }`,
    );
    expect(r.json.data.updateProfile).toEqual({
      success: true,
      profile: { email: "alice@example.com", firstName: "Alicia", lastName: "A", phoneNumber: "+1 555 0199" },
    });
    expect((await gql(s, `{ profile { firstName } }`)).json.data.profile.firstName).toBe("Alicia");
    const taken = await gql(
      s,
      `mutation { updateProfile(input: {email: "BOB@example.com"}) { success errors { field messages } } }`,
    );
    expect(taken.json.data.updateProfile).toEqual({
      success: false,
      errors: [{ field: "email", messages: ["is used by another user"] }],
    });
    const bad = await gql(s, `mutation { updateProfile(input: {email: "not an email"}) { success errors { field } } }`);
    expect(bad.json.data.updateProfile).toEqual({ success: false, errors: [{ field: "email" }] });
    expect((await gql(s, `{ profile { email } }`)).json.data.profile.email).toBe("alice@example.com");
  });
});
