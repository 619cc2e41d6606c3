// One conformance suite for both SnapshotSource implementations over the same published snapshot
// (a generated 20-company source through a real pipeline run): the in-memory Snapshot the tests'
// fixtures use and the lazy DuckDB reader the server holds. Expected values are brute force over
// the loader's plain tables (filter, sort with the contract's comparator, slice), not either
// implementation. Then a real server over each: every REST body byte-identical.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MemorySource } from "../../api/resources/memory-source.ts";
import { comparator, inRanges, ORDER_VALUES, type OrderBy, type Ranges } from "../../api/resources/ordering.ts";
import { ReaderSource } from "../../api/resources/reader-source.ts";
import type { SnapshotSource } from "../../api/resources/snapshot-source.ts";
import { loadSnapshot } from "../../pipeline/store/read/load-snapshot.ts";
import { SnapshotReader } from "../../pipeline/store/read/snapshot-reader.ts";
import { metricsKey, type Snapshot } from "../../pipeline/store/snapshot/model.ts";
import { RATING_NAMES, type RatingRow } from "../../pipeline/types.ts";
import { sampleStore } from "../sample.ts";
import { startTestServer, type TestServer } from "./helpers.ts";

let snap: Snapshot;
let reader: SnapshotReader;
const impls: Record<string, () => SnapshotSource> = {
  memory: () => new MemorySource(snap),
  reader: () => new ReaderSource(reader),
};

beforeAll(async () => {
  const { dataDir, id } = sampleStore();
  snap = await loadSnapshot(dataDir, id);
  reader = await SnapshotReader.open(dataDir, id, { cacheEntries: 8 });
}, 120_000);
afterAll(() => reader?.close());

/** Brute force: the date's rows joined to companies, filtered, sorted, sliced. */
function expectedRated(date: string, orderBy: OrderBy, search?: string, ranges?: Ranges) {
  const all = (snap.ratingsByDate.get(date) ?? [])
    .map((ratings) => ({ company: snap.companyByTicker.get(ratings.ticker.toUpperCase())!, ratings }))
    .filter(
      (e) =>
        e.company &&
        (!search || e.company.ticker.toUpperCase().includes(search) || e.company.name.toUpperCase().includes(search)) &&
        (!ranges || inRanges(e.ratings, ranges)),
    );
  return all.sort(comparator(orderBy));
}

function latestOnOrBefore(ticker: string, date?: string): RatingRow | undefined {
  const rows = snap.ratingDates.flatMap((d) =>
    snap.ratingsByDate.get(d)!.filter((r) => r.ticker.toUpperCase() === ticker.toUpperCase()),
  );
  return rows.filter((r) => date === undefined || r.date <= date).at(-1);
}

describe.each(Object.keys(impls))("SnapshotSource conformance: %s", (name) => {
  let s: SnapshotSource;
  beforeAll(() => {
    s = impls[name]();
  });

  it("identity, companies, benchmarks, rating dates as of a day", async () => {
    expect([s.id, s.createdAt]).toEqual([snap.id, snap.createdAt]);
    expect(await s.companies()).toEqual(snap.companies);
    const c = snap.companies[4];
    expect(await s.companiesByTicker([c.ticker.toLowerCase(), "NOPE"])).toEqual([c, undefined]);
    expect(await s.companiesById([c.id, "x"])).toEqual([c, undefined]);
    expect(await s.benchmarks()).toEqual(snap.benchmarks);
    expect(await s.benchmarkById(snap.benchmarks[0].id)).toEqual(snap.benchmarks[0]);
    const d = snap.ratingDates;
    expect(await s.ratingDateOnOrBefore()).toBe(d.at(-1));
    expect(await s.ratingDateOnOrBefore("1900-01-01")).toBeNull();
    expect(await s.ratingDateOnOrBefore(d[1])).toBe(d[1]);
    // the day before a rating date answers the previous one
    const before = new Date(Date.parse(d[2]) - 86_400_000).toISOString().slice(0, 10);
    expect(await s.ratingDateOnOrBefore(before)).toBe(d[1]);
  });

  it("rated stocks of a date: every order, both directions, search, ranges, pages, totals", async () => {
    const date = snap.ratingDates.at(-1)!;
    for (const orderBy of ORDER_VALUES) {
      const want = expectedRated(date, orderBy);
      const page = await s.ratedStocks({ date, orderBy, offset: 3, limit: 7 });
      expect(page.items, orderBy).toEqual(want.slice(3, 10));
      expect(await page.totalCount()).toBe(want.length);
    }
    const needle = snap.companies[2].name.slice(1, 3).toUpperCase();
    const ranges: Ranges = { [RATING_NAMES[0]]: [3, 9], [RATING_NAMES[2]]: [0, 8] };
    for (const [search, r] of [
      [needle, undefined],
      [undefined, ranges],
      [needle, ranges],
      ["ZZZNOTHING", undefined],
    ] as const) {
      for (const orderBy of ["-market_cap", RATING_NAMES[1], "-name"] as OrderBy[]) {
        const want = expectedRated(date, orderBy, search, r);
        const page = await s.ratedStocks({ date, orderBy, search, ranges: r, offset: 1, limit: 5 });
        expect(page.items).toEqual(want.slice(1, 6));
        expect(await page.totalCount()).toBe(want.length);
      }
    }
    expect((await s.ratedStocks({ date: "1900-01-01", orderBy: "ticker", offset: 0, limit: 5 })).items).toEqual([]);
    // an earlier date too (the reader keeps only the last date's rows in a table of their own)
    const earlier = snap.ratingDates[Math.floor(snap.ratingDates.length / 2)];
    for (const orderBy of ORDER_VALUES) {
      const want = expectedRated(earlier, orderBy);
      const page = await s.ratedStocks({ date: earlier, orderBy, offset: 2, limit: 5 });
      expect(page.items, orderBy).toEqual(want.slice(2, 7));
      expect(want.length).toBeGreaterThan(10);
      expect(await page.totalCount()).toBe(want.length);
    }
  });

  it("ratings as of a date, latest ratings, one ticker's history paged both ways", async () => {
    const tickers = [...snap.companies.map((c) => c.ticker), "NOPE"];
    for (const date of [undefined, snap.ratingDates[0], snap.ratingDates[3], "1900-01-01"]) {
      expect(
        await s.ratingsAsOf(
          tickers.map((t) => t.toLowerCase()),
          date,
        ),
      ).toEqual(tickers.map((t) => latestOnOrBefore(t, date)));
    }
    const t = snap.companies[7].ticker;
    const all = snap.ratingDates.flatMap((d) => snap.ratingsByDate.get(d)!.filter((r) => r.ticker === t));
    const asc = await s.ratingHistory(t.toLowerCase(), { offset: 1, limit: 4 });
    expect(asc.items).toEqual(all.slice(1, 5));
    expect(await asc.totalCount()).toBe(all.length);
    expect((await s.ratingHistory(t, { offset: 0, limit: 3, descending: true })).items).toEqual(
      [...all].reverse().slice(0, 3),
    );
    expect((await s.ratingHistory("NOPE", { offset: 0, limit: 3 })).items).toEqual([]);
  });

  it("returns, financials, stored metrics and portfolios as the loader holds them", async () => {
    for (const c of snap.companies.slice(0, 6)) {
      expect(await s.stockReturns(c.ticker.toLowerCase())).toEqual(snap.stockReturns.get(c.ticker));
      expect(await s.financialsOf([c.ticker])).toEqual([snap.financials.get(c.ticker)]);
      for (const b of [null, snap.benchmarks[0].id])
        expect(await s.storedMetrics("stock", [c.ticker], b)).toEqual([
          snap.metrics.get(metricsKey("stock", c.ticker, b)),
        ]);
    }
    expect((await s.stockReturns("NOPE")).dates).toEqual([]);
    const ids = [...snap.portfolios.keys()];
    expect(await s.portfolioResults([...ids, "nope"])).toEqual([
      ...ids.map((id) => snap.portfolios.get(id)),
      undefined,
    ]);
    expect(await s.storedMetrics("portfolio", ids, null)).toEqual(
      ids.map((id) => snap.metrics.get(metricsKey("portfolio", id, null))),
    );
    expect(await s.predefinedPortfolios()).toEqual([...snap.portfolios.values()].filter((p) => p.ownerId === null));
  });
});

describe("REST over the lazy reader", () => {
  const servers: TestServer[] = [];
  afterAll(async () => {
    for (const x of servers) await x.close();
  });

  it("answers every resource byte for byte as over the in-memory snapshot", async () => {
    const mem = await startTestServer({ deps: { snapshot: () => snap } });
    const lazy = await startTestServer({ deps: { snapshot: () => new ReaderSource(reader) } });
    servers.push(mem, lazy);
    const c = snap.companies[5];
    const date = snap.ratingDates[2];
    const pid = [...snap.portfolios.keys()][0];
    const bench = snap.benchmarks[0].id;
    const calls: [string, Record<string, string | number>][] = [
      ["stock_ratings", {}],
      ["stock_ratings", { order_by: "-market_cap", limit: 5, offset: 2 }],
      ["stock_ratings", { date, order_by: RATING_NAMES[3], search: c.name.slice(0, 2) }],
      [
        "stock_ratings",
        { order_by: `-${RATING_NAMES[0]}`, ranges: JSON.stringify({ [RATING_NAMES[0]]: [2, 9] }), format: "csv" },
      ],
      [`stock_ratings/${c.ticker}`, {}],
      [`stock_ratings/${c.ticker.toLowerCase()}`, { date }],
      [`stock_metrics/${c.ticker}`, { benchmark: bench }],
      [`stock_performance/${c.ticker}`, { type: "cumulative_return" }],
      [`stock_financials/${c.ticker}`, { type: "annual" }],
      ["benchmarks", {}],
      ["portfolios", {}],
      [`portfolios/${pid}`, {}],
      [`portfolio_holdings/${pid}`, {}],
      [`portfolio_metrics/${pid}`, {}],
      [`portfolio_performance/${pid}`, { type: "cumulative_return" }],
      [`stock_performance/${c.ticker}`, { type: "drawdown", benchmark: bench }],
      ["stock_ratings/NOPE", {}],
    ];
    let ok = 0;
    for (const [path, params] of calls) {
      const [a, b] = [await mem.api(path, params), await lazy.api(path, params)];
      expect([b.status, b.text], path).toEqual([a.status, a.text]);
      if (a.status === 200) ok++;
    }
    expect(ok).toBe(calls.length - 1); // real payloads compared, not only errors (the last call is a 404)
  });
});
