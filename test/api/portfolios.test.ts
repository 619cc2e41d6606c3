import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { alignBenchmark, metricRows, performanceSeries, sliceByPeriod } from "../../pipeline/analytics/index.ts";
import { computeTrades } from "../../pipeline/portfolios/index.ts";
import { metricsKey } from "../../pipeline/store/snapshot/model.ts";
import { RATING_CAMEL, RATING_NAMES } from "../../pipeline/types.ts";
import { KEYS } from "./fixture.ts";
import { parseCsv, startTestServer, type TestServer } from "./helpers.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s?.close());

const P_FIELDS = [
  "id",
  "owner",
  "name",
  "description",
  "private",
  "createdAt",
  "rebalanceFrequency",
  "maxStocks",
  "maxStocksCriteria",
  "maxStocksCriteriaOrder",
];

describe("portfolios", () => {
  it("private=false lists the predefined portfolios with exact fields", async () => {
    const r = await s.api("portfolios", { private: "false" });
    expect(r.status).toBe(200);
    expect(r.json.map((p: { id: string }) => p.id)).toEqual(["101"]);
    const p = r.json[0];
    const res = s.fx.snapshot.portfolios.get("101")!;
    expect(p).toEqual({
      id: "101",
      owner: { id: "system" },
      name: "Top rated",
      description: "Best total rating, growth at least 3",
      private: false,
      createdAt: res.createdAt,
      rebalanceFrequency: 3,
      maxStocks: 10,
      maxStocksCriteria: "total_rating",
      maxStocksCriteriaOrder: "descending",
      maxSectorConcentration: "0.30",
      nextRebalanceDate: res.nextRebalanceDate,
      previousRebalanceDate: res.previousRebalanceDate,
      ranges: { growthRating: [3, 10] },
    });
    expect(Object.keys(p)).toEqual([
      ...P_FIELDS,
      "maxSectorConcentration",
      "nextRebalanceDate",
      "previousRebalanceDate",
      "ranges",
    ]);
  });

  it("default private=true lists the caller's portfolios only; no maxSectorConcentration when unset", async () => {
    const a = await s.api("portfolios");
    expect(a.json.map((p: { id: string }) => p.id)).toEqual(["201"]);
    expect(a.json[0]).toMatchObject({
      owner: { id: "u1" },
      private: true,
      createdAt: "2015-03-01T12:00:00.000Z",
      ranges: { growthRating: [5, 10], returnRating: [2, 10] },
    });
    expect("maxSectorConcentration" in a.json[0]).toBe(false);
    expect(Object.keys(a.json[0])).toEqual([...P_FIELDS, "nextRebalanceDate", "previousRebalanceDate", "ranges"]);
    const b = await s.api("portfolios", { private: "true", api_key: KEYS.bob });
    expect(b.json.map((p: { id: string }) => p.id)).toEqual(["202"]);
    expect(b.json[0].ranges).toEqual({});
    expect((await s.api("portfolios", { private: "maybe" })).status).toBe(400);
  });

  it("one: predefined and own visible; another user's private portfolio and unknown ids are 404", async () => {
    expect((await s.api("portfolios/101")).json.id).toBe("101");
    expect((await s.api("portfolios/201/")).json.id).toBe("201");
    for (const path of [
      "portfolios/202",
      "portfolio_holdings/202",
      "portfolio_trades/202?value=1000",
      "portfolio_metrics/202",
      "portfolio_performance/202",
      "portfolios/999999",
      "portfolio_holdings/999999",
    ]) {
      const [p, q] = path.split("?");
      const r = await s.api(p, q ? Object.fromEntries(new URLSearchParams(q)) : {});
      expect(r.status, path).toBe(404);
      expect(r.json.error.code).toBe("not_found");
    }
    expect((await s.api("portfolios/202", { api_key: KEYS.bob })).status).toBe(200);
  });

  it("CSV: dotted owner.id and ranges.* columns", async () => {
    const r = await s.api("portfolios", { private: "false", format: "csv" });
    const rows = parseCsv(r.text);
    expect(rows[0].slice(0, 3)).toEqual(["id", "owner.id", "name"]);
    expect(rows[0]).toContain("ranges.growthRating");
    const col = rows[0].indexOf("ranges.growthRating");
    expect(rows[1][col]).toBe("[3,10]");
    expect(rows[1][rows[0].indexOf("private")]).toBe("false");
  });
});

describe("portfolio_holdings", () => {
  const holdings = () => s.fx.snapshot.portfolios.get("101")!.holdings;
  it("holdings of previousRebalanceDate, ordered by ticker, plain sector names", async () => {
    const r = await s.api("portfolio_holdings/101");
    expect(r.status).toBe(200);
    expect(r.json.map((x: { stock: { ticker: string } }) => x.stock.ticker)).toEqual(
      holdings()
        .map((h) => h.ticker)
        .sort(),
    );
    const first = r.json[0];
    expect(Object.keys(first)).toEqual(["date", "stock", ...RATING_NAMES.map((n) => RATING_CAMEL[n])]);
    expect(first.date).toBe(s.fx.snapshot.portfolios.get("101")!.previousRebalanceDate);
    expect(typeof first.stock.sector).toBe("string");
    const h = holdings().find((x) => x.ticker === first.stock.ticker)!;
    expect(first.totalRating).toBe(h.total_rating.toFixed(4));
  });

  it("order_by, search, limit, offset", async () => {
    const sorted = [...holdings()]
      .sort((a, b) => b.risk_rating - a.risk_rating || (a.ticker < b.ticker ? -1 : 1))
      .map((h) => h.ticker);
    const r = await s.api("portfolio_holdings/101", { order_by: "-risk_rating", offset: 2, limit: 3 });
    expect(r.json.map((x: { stock: { ticker: string } }) => x.stock.ticker)).toEqual(sorted.slice(2, 5));
    const t = holdings()[0].ticker;
    const q = await s.api("portfolio_holdings/101", { search: t.toLowerCase() });
    expect(q.json.map((x: { stock: { ticker: string } }) => x.stock.ticker)).toContain(t);
    for (const [p, v] of [
      ["order_by", "price"],
      ["limit", "0"],
      ["offset", "-2"],
    ])
      expect((await s.api("portfolio_holdings/101", { [p]: v })).status).toBe(400);
  });

  it("CSV", async () => {
    const rows = parseCsv((await s.api("portfolio_holdings/201", { format: "csv" })).text);
    expect(rows[0][0]).toBe("date");
    expect(rows[0]).toContain("stock.sector");
    expect(rows.length - 1).toBe(s.fx.snapshot.portfolios.get("201")!.holdings.length);
  });
});

describe("portfolio_trades", () => {
  it("equals computeTrades on the last rebalance's holdings", async () => {
    const res = s.fx.snapshot.portfolios.get("101")!;
    const r = await s.api("portfolio_trades/101", { value: 1_000_000 });
    expect(r.status).toBe(200);
    expect(r.json).toEqual(
      JSON.parse(
        JSON.stringify(
          computeTrades({
            holdings: res.holdings,
            companies: s.fx.snapshot.companyByTicker,
            value: 1_000_000,
            allowFractional: false,
          }),
        ),
      ),
    );
    expect(r.json.length).toBe(res.holdings.length);
    expect(
      r.json.every(
        (x: { quantity: number; order_type: string }) => Number.isInteger(x.quantity) && x.order_type === "Buy",
      ),
    ).toBe(true);
  });

  it("allow_fractional and rebalance_period=today", async () => {
    const res = s.fx.snapshot.portfolios.get("201")!;
    const r = await s.api("portfolio_trades/201", {
      value: 50_000,
      allow_fractional: "true",
      rebalance_period: "today",
    });
    expect(r.json).toEqual(
      JSON.parse(
        JSON.stringify(
          computeTrades({
            holdings: res.todayHoldings,
            companies: s.fx.snapshot.companyByTicker,
            value: 50_000,
            allowFractional: true,
          }),
        ),
      ),
    );
    expect(r.json[0].date).toBe(res.todayDate);
  });

  it.each([
    [{}],
    [{ value: "-5" }],
    [{ value: "0" }],
    [{ value: "12.5" }],
    [{ value: "lots" }],
    [{ value: "100", allow_fractional: "yes" }],
    [{ value: "100", rebalance_period: "tomorrow" }],
  ])("400 for %j", async (params) => {
    const r = await s.api("portfolio_trades/101", params as Record<string, string>);
    expect(r.status).toBe(400);
    expect(r.json.error.code).toBe("invalid_parameter");
  });

  it("missing value names the parameter", async () => {
    const r = await s.api("portfolio_trades/101");
    expect(r.json.error.details[0].param).toBe("value");
  });

  it("CSV columns", async () => {
    const rows = parseCsv((await s.api("portfolio_trades/101", { value: 10000, format: "csv" })).text);
    expect(rows[0]).toEqual(["date", "id", "ticker", "name", "price", "quantity", "value", "pct", "order_type"]);
  });
});

describe("portfolio analytics", () => {
  const bench = () => s.fx.snapshot.benchmarks[0];
  it("metrics: stored full-period rows, benchmark, period", async () => {
    const res = s.fx.snapshot.portfolios.get("101")!;
    const r = await s.api("portfolio_metrics/101");
    expect(r.json).toEqual(s.fx.snapshot.metrics.get(metricsKey("portfolio", "101")));
    expect(Object.keys(r.json[0])).toEqual(["metric", "Portfolio"]);
    expect(r.json[0].Portfolio).toBe(res.returns.dates[0]);
    const b = await s.api("portfolio_metrics/101", { benchmark: bench().id });
    expect(b.json).toEqual(s.fx.snapshot.metrics.get(metricsKey("portfolio", "101", bench().id)));
    const p = await s.api("portfolio_metrics/201", { period: 0.25, benchmark: bench().id });
    const own = s.fx.snapshot.portfolios.get("201")!.returns;
    const al = alignBenchmark(own.dates, bench().levels);
    expect(p.json).toEqual(
      metricRows(sliceByPeriod(own, 0.25), "Portfolio", { name: bench().name, returns: sliceByPeriod(al, 0.25) }),
    );
    expect((await s.api("portfolio_metrics/101", { benchmark: "42" })).status).toBe(400);
  });

  it("performance: named Portfolio, starts at 0, benchmark aligned", async () => {
    const res = s.fx.snapshot.portfolios.get("101")!;
    const r = await s.api("portfolio_performance/101", { benchmark: bench().id, type: "drawdown" });
    expect(r.json).toEqual(
      JSON.parse(
        JSON.stringify(
          performanceSeries(
            "drawdown",
            { name: "Portfolio", returns: res.returns },
            { name: bench().name, returns: alignBenchmark(res.returns.dates, bench().levels) },
          ),
        ),
      ),
    );
    const c = await s.api("portfolio_performance/101");
    expect(c.json[0].name).toBe("Portfolio");
    expect(c.json[0].data[0].return).toBe(0);
    expect((await s.api("portfolio_performance/101", { type: "rolling_beta" })).status).toBe(400);
    expect((await s.api("portfolio_performance/101", { type: "sideways" })).status).toBe(400);
  });

  it("portfolio analytics need analytics:read besides portfolios:read", async () => {
    const r = await s.api("portfolio_metrics/101", { api_key: KEYS.aliceNoAnalytics });
    expect(r.status).toBe(403);
    expect(r.json.error.message).toContain("analytics:read");
    expect((await s.api("portfolio_holdings/101", { api_key: KEYS.aliceNoAnalytics })).status).toBe(200);
  });
});

describe("watchlists", () => {
  it("list: the caller's watchlists with exact fields", async () => {
    const r = await s.api("watchlists");
    expect(r.json).toEqual([
      {
        id: "1",
        name: "Alice tech",
        description: "a few",
        private: true,
        createdAt: "2015-05-01T10:00:00.000Z",
        stockCount: s.catalog.watchlist("1")!.tickers.length,
      },
    ]);
    const b = await s.api("watchlists/", { api_key: KEYS.bob });
    expect(b.json.map((w: { id: string }) => w.id)).toEqual(["2", "3"]);
  });

  it("one; another user's private watchlist → 404; a public one is visible", async () => {
    expect((await s.api("watchlists/1")).json.stockCount).toBe(s.catalog.watchlist("1")!.tickers.length);
    expect((await s.api("watchlists/2")).status).toBe(404);
    expect((await s.api("watchlist_items/2")).status).toBe(404);
    expect((await s.api("watchlists/3")).status).toBe(200);
    expect((await s.api("watchlists/77")).status).toBe(404);
  });

  it("items: sector/industry objects, no date, default order ticker, -total_rating", async () => {
    const w = s.catalog.watchlist("1")!;
    const r = await s.api("watchlist_items/1");
    expect(r.json.map((x: { stock: { ticker: string } }) => x.stock.ticker)).toEqual([...w.tickers].sort());
    const it0 = r.json[0];
    expect(Object.keys(it0)).toEqual(["stock", ...RATING_NAMES.map((n) => RATING_CAMEL[n])]);
    const c = s.fx.snapshot.companyByTicker.get(it0.stock.ticker)!;
    expect(it0.stock.sector).toEqual({ id: c.sectorId, name: c.sector });
    expect(it0.stock.industry).toEqual({ id: c.industryId, name: c.industry });
    const d = await s.api("watchlist_items/1", { order_by: "-total_rating" });
    const vals = d.json.map((x: { totalRating: string }) => Number(x.totalRating));
    expect(vals).toEqual([...vals].sort((a, b) => b - a));
    const p = await s.api("watchlist_items/1", { order_by: "name", limit: 2, offset: 1 });
    expect(p.json).toHaveLength(2);
    expect((await s.api("watchlist_items/1", { order_by: "x" })).status).toBe(400);
  });

  it("items reflect catalog changes immediately (ETag changes too)", async () => {
    const w = s.catalog.watchlist("1")!;
    const before = await s.api("watchlist_items/1");
    const added = s.fx.snapshot.companies[100].ticker;
    w.tickers.push(added);
    try {
      const after = await s.api("watchlist_items/1", {}, { "if-none-match": before.headers.get("etag")! });
      expect(after.status).toBe(200);
      expect(after.json.map((x: { stock: { ticker: string } }) => x.stock.ticker)).toContain(added);
    } finally {
      w.tickers.pop();
    }
  });

  it("CSV: stock.sector.id, stock.sector.name", async () => {
    const rows = parseCsv((await s.api("watchlist_items/1", { format: "csv" })).text);
    expect(rows[0].slice(0, 8)).toEqual([
      "stock.id",
      "stock.ticker",
      "stock.name",
      "stock.marketCap",
      "stock.sector.id",
      "stock.sector.name",
      "stock.industry.id",
      "stock.industry.name",
    ]);
    expect(parseCsv((await s.api("watchlists", { format: "csv" })).text)[0]).toEqual([
      "id",
      "name",
      "description",
      "private",
      "createdAt",
      "stockCount",
    ]);
  });
});

describe("benchmarks", () => {
  it("list with any valid key (even one with only ratings:read)", async () => {
    const r = await s.api("benchmarks", { api_key: KEYS.aliceRatingsOnly });
    expect(r.status).toBe(200);
    expect(r.json).toEqual([
      { id: "1", name: "Equal Weight Index", description: "All stocks, equal weight, daily", rebalanceFrequency: 0 },
    ]);
    const csv = parseCsv((await s.api("benchmarks/", { format: "csv" })).text);
    expect(csv).toEqual([
      ["id", "name", "description", "rebalanceFrequency"],
      ["1", "Equal Weight Index", "All stocks, equal weight, daily", "0"],
    ]);
  });
});
