// The lazy reader answers every per-request slice with exactly the values the in-memory loader
// holds for the same published snapshot (a generated 20-company source, a real pipeline run,
// tables in parts of 6 companies so the reader routes each key to its part).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadSnapshot } from "../../pipeline/store/read/load-snapshot.ts";
import { SnapshotReader } from "../../pipeline/store/read/snapshot-reader.ts";
import { metricsKey, type Snapshot } from "../../pipeline/store/snapshot/model.ts";
import { generatedStore } from "./published.ts";

let snap: Snapshot;
let reader: SnapshotReader;
let opened: { dataDir: string; id: string };

beforeAll(async () => {
  const { dataDir, run } = await generatedStore({ companies: 20, years: 2, seed: 11, tickersPerPartition: 6 });
  const id = await run();
  opened = { dataDir, id };
  snap = await loadSnapshot(dataDir, id);
  reader = await SnapshotReader.open(dataDir, id, { cacheEntries: 8 });
}, 120_000);
afterAll(() => reader?.close());

describe("SnapshotReader", () => {
  it("opens with companies, rating dates, benchmarks and portfolio ids", () => {
    expect(reader.companies).toEqual(snap.companies);
    expect(reader.ratingDates).toEqual(snap.ratingDates);
    expect(reader.benchmarks).toEqual(snap.benchmarks);
    expect(reader.portfolioIds).toEqual([...snap.portfolios.keys()].sort());
    expect(reader.companyByTicker.get(snap.companies[3].ticker.toUpperCase())).toEqual(snap.companies[3]);
  });

  it("returns, metric rows and financials of every stock as the loader has them", async () => {
    for (const c of snap.companies) {
      expect(await reader.stockReturns(c.ticker)).toEqual(snap.stockReturns.get(c.ticker));
      for (const b of [null, ...snap.benchmarks.map((x) => x.id)]) {
        expect(await reader.metricRows("stock", c.ticker, b)).toEqual(
          snap.metrics.get(metricsKey("stock", c.ticker, b)),
        );
      }
      for (const type of ["annual", "quarterly", "ttm"] as const) {
        expect(await reader.financials(c.ticker.toUpperCase(), type)).toEqual(
          snap.financials.get(c.ticker.toUpperCase())?.[type],
        );
      }
    }
    expect(await reader.stockReturns("NOPE")).toBeUndefined();
    expect(await reader.metricRows("stock", "NOPE")).toBeUndefined();
  });

  it("ratings of a date, paged by ticker, and every portfolio with its metrics", async () => {
    for (const d of snap.ratingDates) expect(await reader.ratingsOn(d)).toEqual(snap.ratingsByDate.get(d));
    const last = snap.ratingDates.at(-1)!;
    expect(await reader.ratingsOn(last, { offset: 2, limit: 3 })).toEqual(snap.ratingsByDate.get(last)!.slice(2, 5));
    for (const [id, p] of snap.portfolios) {
      expect(await reader.portfolio(id)).toEqual(p);
      for (const b of [null, ...snap.benchmarks.map((x) => x.id)])
        expect(await reader.metricRows("portfolio", id, b)).toEqual(snap.metrics.get(metricsKey("portfolio", id, b)));
    }
  });

  it("hands out one dates array per calendar: stocks priced on the same days share it", async () => {
    const byDays = new Map<string, string[][]>();
    for (const c of snap.companies) {
      const r = (await reader.stockReturns(c.ticker))!;
      const key = r.dates.join();
      byDays.set(key, [...(byDays.get(key) ?? []), r.dates]);
    }
    // the generated universe has stocks listed on different days, and several on the same ones
    expect(byDays.size).toBeGreaterThan(1);
    const shared = [...byDays.values()].filter((l) => l.length > 1);
    expect(shared.length).toBeGreaterThan(0);
    for (const l of byDays.values()) for (const d of l) expect(d).toBe(l[0]);
  });

  it("closes after releasing its caches; a closed reader refuses reads", async () => {
    const { dataDir, id } = opened;
    const r = await SnapshotReader.open(dataDir, id);
    expect(await r.stockReturns(snap.companies[0].ticker)).toEqual(snap.stockReturns.get(snap.companies[0].ticker));
    await r.closeReleased();
    await expect(r.stockReturns(snap.companies[1].ticker)).rejects.toThrow(/is closed/);
  });

  it("reads the histories of tickers asked for together in one scan, each as the loader has it", async () => {
    const r = await SnapshotReader.open(opened.dataDir, opened.id, { cacheEntries: 4 });
    try {
      // the in-memory loader's history of a ticker: its rows of every rating date, by date
      const expected = (t: string) =>
        snap.ratingDates.flatMap((d) => (snap.ratingsByDate.get(d) ?? []).filter((x) => x.ticker.toUpperCase() === t));
      const tickers = [...snap.companies.map((c) => c.ticker.toUpperCase()), "NOPE"];
      const scans: string[] = [];
      const conn = (r as unknown as { conns: { run(sql: string, ...bound: unknown[]): Promise<unknown> }[] }).conns;
      for (const c of conn) {
        const run = c.run.bind(c);
        c.run = (sql: string, ...bound: unknown[]) => {
          scans.push(sql);
          return run(sql, ...bound);
        };
      }
      const got = await Promise.all(tickers.map((t) => r.ratingHistory(t)));
      expect(scans.filter((q) => q.includes("from ratings r")).length).toBe(1);
      tickers.forEach((t, i) => {
        expect(got[i]).toEqual(expected(t));
      });
      expect(got[0].length).toBeGreaterThan(1);
      expect(got.at(-1)).toEqual([]);
      // asked again, alone (the cache holds 1 of them): the same rows
      expect(await r.ratingHistory(tickers[3])).toEqual(expected(tickers[3]));
    } finally {
      await r.closeReleased();
    }
  });

  it("answers concurrent requests on its connection pool", async () => {
    const tickers = snap.companies.map((c) => c.ticker);
    const got = await Promise.all(tickers.map((t) => reader.stockReturns(t)));
    expect(got).toEqual(tickers.map((t) => snap.stockReturns.get(t)));
  });
});
