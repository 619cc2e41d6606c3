import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RATING_CAMEL, RATING_NAMES, type RatingRow } from "../../pipeline/types.ts";
import { parseCsv, startTestServer, type TestServer } from "./helpers.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s?.close());

const latestRows = () => {
  const snap = s.fx.snapshot;
  return snap.ratingsByDate.get(snap.ratingDates.at(-1)!)!;
};
const company = (t: string) => s.fx.snapshot.companyByTicker.get(t)!;
const tickers = (j: { stock: { ticker: string } }[]) => j.map((x) => x.stock.ticker);

/** Brute-force reference: filter and sort the rows of a date exactly as the contract says. */
function reference(rows: RatingRow[], orderBy: string, filter: (r: RatingRow) => boolean = () => true): string[] {
  const desc = orderBy.startsWith("-");
  const key = desc ? orderBy.slice(1) : orderBy;
  const val = (r: RatingRow): number | string | null =>
    key === "ticker"
      ? r.ticker
      : key === "name"
        ? company(r.ticker).name.toLowerCase()
        : key === "market_cap"
          ? company(r.ticker).marketCap
          : r[key as "total_rating"];
  return rows
    .filter(filter)
    .sort((a, b) => {
      const x = val(a);
      const y = val(b);
      if (x === null || y === null) return x === y ? (a.ticker < b.ticker ? -1 : 1) : x === null ? 1 : -1;
      if (x !== y) return (x < y ? -1 : 1) * (desc ? -1 : 1);
      return a.ticker < b.ticker ? -1 : 1;
    })
    .map((r) => r.ticker);
}

describe("stock_ratings list", () => {
  it("defaults: latest date, -total_rating, 50 items, item shape", async () => {
    const r = await s.api("stock_ratings");
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/application\/json/);
    expect(r.json).toHaveLength(50);
    expect(tickers(r.json)).toEqual(reference(latestRows(), "-total_rating").slice(0, 50));
    const it0 = r.json[0];
    expect(Object.keys(it0)).toEqual(["date", "stock", ...RATING_NAMES.map((n) => RATING_CAMEL[n])]);
    expect(Object.keys(it0.stock)).toEqual(["id", "ticker", "name", "marketCap", "sector", "industry"]);
    expect(it0.date).toBe(s.fx.snapshot.ratingDates.at(-1));
    const row = latestRows().find((x) => x.ticker === it0.stock.ticker)!;
    const c = company(row.ticker);
    expect(it0.totalRating).toBe(row.total_rating.toFixed(4));
    expect(it0.macroRating).toBe(row.macro_rating.toFixed(4));
    expect(it0.stock).toEqual({
      id: c.id,
      ticker: c.ticker,
      name: c.name,
      marketCap: String(c.marketCap),
      sector: c.sector,
      industry: c.industry,
    });
    for (const x of r.json) {
      expect(x.totalRating).toMatch(/^\d+\.\d{4}$/);
      if (x.stock.marketCap !== null) expect(x.stock.marketCap).toMatch(/^\d+$/);
    }
  });

  it("ties in total_rating are broken by ticker", async () => {
    const r = await s.api("stock_ratings", { limit: 200, order_by: "-total_rating" });
    const tied = r.json
      .filter((x: { totalRating: string }) => x.totalRating === "7.2500")
      .map((x: { stock: { ticker: string } }) => x.stock.ticker);
    expect(tied.length).toBe(3);
    expect(tied).toEqual([...tied].sort());
  });

  it("paging arithmetic: offset=50&limit=100 → 51..150; offset=50 alone → 51..100 (trailing slash)", async () => {
    const all = reference(latestRows(), "ticker");
    expect(all.length).toBeGreaterThan(200);
    const a = await s.api("stock_ratings/", { order_by: "ticker", limit: 100, offset: 50 });
    expect(tickers(a.json)).toEqual(all.slice(50, 150));
    const b = await s.api("stock_ratings", { order_by: "ticker", offset: 50 });
    expect(tickers(b.json)).toEqual(all.slice(50, 100));
    const c = await s.api("stock_ratings", { order_by: "ticker", offset: 250, limit: 200 });
    expect(tickers(c.json)).toEqual(all.slice(250, 450));
    const d = await s.api("stock_ratings", { order_by: "ticker", offset: 10_000 });
    expect(d.json).toEqual([]);
  });

  it.each([
    "ticker",
    "-ticker",
    "name",
    "-name",
    "market_cap",
    "-market_cap",
    ...RATING_NAMES,
    ...RATING_NAMES.map((n) => `-${n}`),
  ])("order_by=%s matches a brute-force sort", async (order) => {
    const r = await s.api("stock_ratings", { order_by: order, limit: 200, offset: 20 });
    expect(r.status).toBe(200);
    expect(tickers(r.json)).toEqual(reference(latestRows(), order).slice(20, 220));
  });

  it.each([
    ["{return_rating:[8,10],growth_rating:[7,10]}", { return_rating: [8, 10], growth_rating: [7, 10] }],
    ['{"return_rating":[8,10],"growth_rating":[7,10]}', { return_rating: [8, 10], growth_rating: [7, 10] }],
    ["{ total_rating : [0, 2.5] }", { total_rating: [0, 2.5] }],
    [
      '{"risk_rating":[3,3.5],"macro_rating":[0,10],"valuation_rating":[1,9]}',
      { risk_rating: [3, 3.5], macro_rating: [0, 10], valuation_rating: [1, 9] },
    ],
    ["{}", {}],
  ] as const)("ranges %s equals a brute-force filter (bounds inclusive)", async (form, bounds) => {
    const keep = (row: RatingRow) =>
      Object.entries(bounds).every(([k, [lo, hi]]) => row[k as "total_rating"] >= lo && row[k as "total_rating"] <= hi);
    const want = reference(latestRows(), "ticker", keep);
    const r = await s.api("stock_ratings", { ranges: form, order_by: "ticker", limit: 200 });
    expect(r.status).toBe(200);
    expect(tickers(r.json)).toEqual(want.slice(0, 200));
  });

  it("ranges bounds are inclusive at both ends", async () => {
    const r = await s.api("stock_ratings", { ranges: "{return_rating:[10,10]}", limit: 200 });
    expect(r.json.length).toBeGreaterThan(0);
    expect(r.json.every((x: { returnRating: string }) => x.returnRating === "10.0000")).toBe(true);
    const g = await s.api("stock_ratings", { ranges: "{growth_rating:[0,7]}", limit: 200, order_by: "ticker" });
    expect(g.json.some((x: { growthRating: string }) => x.growthRating === "7.0000")).toBe(true);
  });

  it("ranges with search, order and paging together", async () => {
    const keep = (row: RatingRow) => row.total_rating >= 2 && row.total_rating <= 9 && /Q/.test(row.ticker);
    const want = reference(latestRows(), "-risk_rating", keep);
    const r = await s.api("stock_ratings", {
      ranges: "{total_rating:[2,9]}",
      search: "q",
      order_by: "-risk_rating",
      offset: 5,
      limit: 30,
    });
    expect(tickers(r.json)).toEqual(want.slice(5, 35));
  });

  it("search on ticker or name, case-insensitive", async () => {
    const r = await s.api("stock_ratings", { search: "app", limit: 200, order_by: "ticker" });
    expect(tickers(r.json)).toEqual(["AAPL", "AMAT", "APLE"].filter((t) => latestRows().some((x) => x.ticker === t)));
    const none = await s.api("stock_ratings", { search: "zzzz-nothing" });
    expect(none.json).toEqual([]);
    const name = await s.api("stock_ratings", { search: "hathaway" });
    expect(tickers(name.json)).toEqual(["BRK.B"]);
  });

  it("date: ratings as of the latest rating date on or before it; before the first → 404", async () => {
    const dates = s.fx.snapshot.ratingDates;
    const mid = await s.api("stock_ratings", { date: "2015-06-15", limit: 1 });
    expect(mid.json[0].date).toBe(dates.filter((d) => d <= "2015-06-15").at(-1));
    const exact = await s.api("stock_ratings", { date: dates[1], order_by: "ticker", limit: 200 });
    expect(exact.json[0].date).toBe(dates[1]);
    expect(tickers(exact.json)).toEqual(reference(s.fx.snapshot.ratingsByDate.get(dates[1])!, "ticker").slice(0, 200));
    const late = await s.api("stock_ratings", { date: "2030-01-01", limit: 1 });
    expect(late.json[0].date).toBe(dates.at(-1));
    const early = await s.api("stock_ratings", { date: "2014-01-01" });
    expect(early.status).toBe(404);
    expect(early.json.error.code).toBe("not_found");
  });

  it.each([
    ["limit", "0"],
    ["limit", "201"],
    ["limit", "abc"],
    ["limit", "1.5"],
    ["offset", "-1"],
    ["offset", "x"],
    ["date", "2015-13-01"],
    ["date", "2015-02-30"],
    ["date", "yesterday"],
    ["order_by", "bogus"],
    ["order_by", "--ticker"],
    ["ranges", "{return_rating:[9,3]}"],
    ["ranges", "{return_rating:[-1,3]}"],
    ["ranges", "{return_rating:[1,11]}"],
    ["ranges", "{bogus_rating:[1,2]}"],
    ["ranges", "{return_rating:[1]}"],
    ["ranges", "not json"],
    ["ranges", "[1,2]"],
    ["format", "xml"],
  ])("400 for %s=%s with the error body", async (p, v) => {
    const r = await s.api("stock_ratings", { [p]: v });
    expect(r.status).toBe(400);
    expect(r.headers.get("content-type")).toMatch(/application\/json/);
    expect(Object.keys(r.json)).toEqual(["error"]);
    expect(Object.keys(r.json.error)).toEqual(["status", "code", "message", "details"]);
    expect(r.json.error.status).toBe(400);
    expect(r.json.error.code).toBe("invalid_parameter");
    expect(r.json.error.details[0].param).toBe(p);
    expect(typeof r.json.error.details[0].message).toBe("string");
  });

  it("limit message is the contract's", async () => {
    const r = await s.api("stock_ratings", { limit: 500 });
    expect(r.json.error.details).toEqual([{ param: "limit", message: "must be an integer from 1 to 200" }]);
  });

  it("CSV: header with dotted columns, RFC 4180 quoting, attachment", async () => {
    const r = await s.api("stock_ratings", { format: "csv", order_by: "ticker", limit: 200, search: "a" });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(r.headers.get("content-disposition")).toBe('attachment; filename="stock_ratings.csv"');
    expect(r.text).toContain("\r\n");
    const rows = parseCsv(r.text);
    expect(rows[0]).toEqual([
      "date",
      "stock.id",
      "stock.ticker",
      "stock.name",
      "stock.marketCap",
      "stock.sector",
      "stock.industry",
      "totalRating",
      "returnRating",
      "growthRating",
      "riskRating",
      "valuationRating",
      "technicalRating",
      "macroRating",
    ]);
    const j = await s.api("stock_ratings", { order_by: "ticker", limit: 200, search: "a" });
    expect(rows.length - 1).toBe(j.json.length);
    const brk = rows.find((x) => x[2] === "BRK.B")!;
    expect(brk[3]).toBe('Berkshire Hathaway "B"');
    const apl = rows.find((x) => x[2] === "AMAT")!;
    expect(apl[3]).toBe("Applied Materials, Inc.");
    expect(r.text).toContain('"Applied Materials, Inc."');
  });

  it("CSV of an empty list still has the header", async () => {
    const r = await s.api("stock_ratings", { format: "csv", search: "nothing-matches" });
    expect(parseCsv(r.text)).toHaveLength(1);
  });
});

describe("stock_ratings one", () => {
  it("case-insensitive ticker, item shape, with and without trailing slash", async () => {
    const t = latestRows()[1].ticker;
    for (const path of [`stock_ratings/${t.toLowerCase()}`, `stock_ratings/${t}/`]) {
      const r = await s.api(path);
      expect(r.status).toBe(200);
      expect(r.json.stock.ticker).toBe(t);
      expect(r.json.totalRating).toBe(latestRows()[1].total_rating.toFixed(4));
      expect(r.json.date).toBe(s.fx.snapshot.ratingDates.at(-1));
    }
  });

  it("dotted ticker and CSV", async () => {
    const r = await s.api("stock_ratings/brk.b", { format: "csv" });
    expect(r.status).toBe(200);
    const rows = parseCsv(r.text);
    expect(rows).toHaveLength(2);
    expect(rows[1][2]).toBe("BRK.B");
  });

  it("date as-of per stock; a stock missing on the latest date answers its previous rating", async () => {
    const snap = s.fx.snapshot;
    const missing = snap.companies[9].ticker;
    expect(latestRows().some((x) => x.ticker === missing)).toBe(false);
    const r = await s.api(`stock_ratings/${missing}`);
    expect(r.status).toBe(200);
    expect(r.json.date).toBe(snap.ratingDates.at(-2));
    const d = await s.api(`stock_ratings/${latestRows()[0].ticker}`, { date: snap.ratingDates[1] });
    expect(d.json.date).toBe(snap.ratingDates[1]);
    const early = await s.api(`stock_ratings/${latestRows()[0].ticker}`, { date: "2015-01-01" });
    expect(early.status).toBe(404);
    const bad = await s.api(`stock_ratings/${latestRows()[0].ticker}`, { date: "2015-1-1" });
    expect(bad.status).toBe(400);
  });

  it("unknown ticker → 404 JSON error", async () => {
    const r = await s.api("stock_ratings/ZZZZQ");
    expect(r.status).toBe(404);
    expect(r.json).toEqual({ error: { status: 404, code: "not_found", message: "unknown ticker ZZZZQ", details: [] } });
    const csv = await s.api("stock_ratings/ZZZZQ", { format: "csv" });
    expect(csv.status).toBe(404);
    expect(csv.headers.get("content-type")).toMatch(/application\/json/);
  });
});
