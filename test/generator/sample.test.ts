// The small sample: determinism, layout and the properties the pipeline relies on.
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateSample } from "../../data/generate.ts";
import { readPortfoliosJson } from "../../pipeline/sources/portfolios-json.ts";
import { readCsv, readRecords, SMALL } from "./helpers.ts";

const root = mkdtempSync(join(tmpdir(), "gen-sample-"));
const dirA = join(root, "a");
const dirB = join(root, "b");
const dirC = join(root, "c");
let files: string[] = [];

beforeAll(async () => {
  const a = await generateSample(dirA, { seed: 7, ...SMALL, vendorRatings: true });
  await generateSample(dirB, { seed: 7, ...SMALL, vendorRatings: true });
  await generateSample(dirC, { seed: 8, ...SMALL, vendorRatings: true });
  files = a.files;
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const sha = (path: string) => createHash("sha256").update(readFileSync(path)).digest("hex");

describe("generateSample determinism", () => {
  it("writes every table of the source layout", () => {
    expect(files).toEqual([
      "benchmarks.csv",
      "companies.csv",
      "fundamentals/us-balance-annual.csv",
      "fundamentals/us-balance-quarterly.csv",
      "fundamentals/us-cashflow-annual.csv",
      "fundamentals/us-cashflow-quarterly.csv",
      "fundamentals/us-income-annual.csv",
      "fundamentals/us-income-quarterly.csv",
      "portfolios.json",
      "prices.csv",
      "ratings.csv",
    ]);
  });

  it("gives byte-identical files for the same seed", () => {
    for (const f of files) expect(sha(join(dirB, f)), f).toBe(sha(join(dirA, f)));
  });

  it("gives different data for another seed", () => {
    for (const f of files.filter((x) => x !== "portfolios.json"))
      expect(sha(join(dirC, f)), f).not.toBe(sha(join(dirA, f)));
  });
});

describe("companies.csv", () => {
  it("has unique ids and 1-5 letter tickers, the 11 sectors, and market_cap = shares x last close", () => {
    const companies = readRecords(dirA, "companies.csv");
    expect(Object.keys(companies[0])).toEqual([
      "id",
      "ticker",
      "name",
      "sector",
      "industry",
      "shares_outstanding",
      "market_cap",
    ]);
    expect(companies).toHaveLength(SMALL.companies);
    expect(new Set(companies.map((c) => c.ticker)).size).toBe(companies.length);
    expect(new Set(companies.map((c) => c.name)).size).toBe(companies.length);
    expect(new Set(companies.map((c) => c.id)).size).toBe(companies.length);
    for (const c of companies) {
      expect(c.ticker).toMatch(/^[A-Z]{1,5}$/);
      expect(c.id).toMatch(/^[1-9]\d*$/);
    }
    expect(new Set(companies.map((c) => c.sector)).size).toBe(11);

    const lastClose = new Map<string, number>();
    // rows ascend by date per ticker
    for (const r of readCsv(dirA, "prices.csv").rows) lastClose.set(r[6], Number(r[4]));
    for (const c of companies)
      expect(Number(c.market_cap)).toBe(Math.round(Number(c.shares_outstanding) * lastClose.get(c.ticker)!));
  });
});

describe("prices.csv", () => {
  const load = () => readCsv(dirA, "prices.csv");

  it("has the layout, positive finite prices and bars that bracket open and close", () => {
    const { header, rows } = load();
    expect(header).toEqual(["date", "open", "high", "low", "close", "volume", "ticker"]);
    const bad = rows.filter((r) => {
      const [o, h, l, c, v] = r.slice(1, 6).map(Number);
      const finite = [o, h, l, c].every((x) => Number.isFinite(x) && x > 0);
      const decimals = r.slice(1, 5).every((x) => /^\d+\.(\d\d|\d{4})$/.test(x));
      return !finite || !decimals || l > Math.min(o, c) || h < Math.max(o, c) || !Number.isInteger(v) || v < 0;
    });
    expect(bad).toEqual([]);
  });

  it("trades on weekdays only, ascending per ticker, listings after the start and delistings before the end", () => {
    const { rows } = load();
    const allDates = [...new Set(rows.map((r) => r[0]))].sort();
    const first = allDates[0];
    const last = allDates[allDates.length - 1];
    expect(first.startsWith(`${2025 - SMALL.years + 1}-01-0`)).toBe(true);
    expect(last).toBe("2025-12-31");
    for (const d of allDates) expect([0, 6]).not.toContain(new Date(`${d}T00:00:00Z`).getUTCDay());
    expect(allDates).not.toContain("2025-12-25");
    expect(allDates).not.toContain("2025-07-04");
    const span = new Map<string, [string, string]>();
    let prev: string[] | null = null;
    for (const r of rows) {
      if (prev && prev[6] === r[6]) expect(r[0] > prev[0]).toBe(true);
      const s = span.get(r[6]);
      span.set(r[6], s ? [s[0], r[0]] : [r[0], r[0]]);
      prev = r;
    }
    const spans = [...span.values()];
    expect(spans.filter(([a]) => a > first).length).toBeGreaterThanOrEqual(1);
    expect(spans.filter(([, b]) => b < last).length).toBeGreaterThanOrEqual(1);
    expect(spans.filter(([a, b]) => a === first && b === last).length).toBeGreaterThan(SMALL.companies * 0.8);
  });
});

describe("benchmarks.csv", () => {
  it("holds one positive index level on every trading date", () => {
    const { header, rows } = readCsv(dirA, "benchmarks.csv");
    expect(header).toEqual(["date", "benchmark", "close"]);
    const priceDates = [...new Set(readCsv(dirA, "prices.csv").rows.map((r) => r[0]))].sort();
    expect(rows.map((r) => r[0])).toEqual(priceDates);
    for (const r of rows) {
      expect(r[1]).toBe("SP500-SIM");
      expect(Number(r[2])).toBeGreaterThan(0);
    }
  });
});

describe("portfolios.json", () => {
  const json = () => JSON.parse(readFileSync(join(dirA, "portfolios.json"), "utf8"));

  it("has valid rule fields with every rebalance frequency", () => {
    const { portfolios, benchmarks } = json();
    expect(portfolios.length).toBeGreaterThanOrEqual(5);
    const camel = [
      "totalRating",
      "returnRating",
      "growthRating",
      "riskRating",
      "valuationRating",
      "technicalRating",
      "macroRating",
    ];
    for (const p of portfolios) {
      expect(p.id).toMatch(/^\d+$/);
      expect(p.name.length).toBeGreaterThan(0);
      expect(typeof p.description).toBe("string");
      expect(Number.isInteger(p.maxStocks) && p.maxStocks >= 10 && p.maxStocks <= 50).toBe(true);
      expect(["total_rating", "return_rating"]).toContain(p.maxStocksCriteria);
      expect(["descending", "ascending"]).toContain(p.maxStocksCriteriaOrder);
      if ("maxSectorConcentration" in p) expect(p.maxSectorConcentration).toMatch(/^0\.\d\d$/);
      expect(Object.keys(p.ranges).length).toBeGreaterThan(0);
      for (const [k, [lo, hi]] of Object.entries(p.ranges) as [string, [number, number]][]) {
        expect(camel).toContain(k);
        expect(0 <= lo && lo <= hi && hi <= 10).toBe(true);
      }
    }
    expect(new Set(portfolios.map((p: { id: string }) => p.id)).size).toBe(portfolios.length);
    expect([...new Set(portfolios.map((p: { rebalanceFrequency: number }) => p.rebalanceFrequency))].sort()).toEqual([
      1, 12, 3, 6,
    ]);
    expect(portfolios.some((p: { maxSectorConcentration?: string }) => p.maxSectorConcentration === undefined)).toBe(
      true,
    );
    expect(portfolios.some((p: { maxSectorConcentration?: string }) => p.maxSectorConcentration !== undefined)).toBe(
      true,
    );
    expect(
      portfolios.filter((p: { maxStocksCriteria: string }) => p.maxStocksCriteria === "return_rating"),
    ).toHaveLength(1);
    expect(
      portfolios.filter((p: { maxStocksCriteriaOrder: string }) => p.maxStocksCriteriaOrder === "ascending"),
    ).toHaveLength(1);

    expect(benchmarks).toEqual([
      expect.objectContaining({ id: "1", name: "S&P 500 (simulated)", rebalanceFrequency: 0, series: "SP500-SIM" }),
      expect.objectContaining({
        id: "2",
        name: "Equal Weight",
        rebalanceFrequency: 1,
        maxStocks: 1000,
        maxStocksCriteria: "total_rating",
        maxStocksCriteriaOrder: "descending",
        ranges: {},
      }),
    ]);
  });

  it("is accepted by the pipeline's portfolios.json reader", () => {
    const { value, rejects } = readPortfoliosJson(dirA);
    expect(rejects).toEqual([]);
    expect(value.portfolios.length).toBe(json().portfolios.length);
    expect(value.benchmarks.map((b) => b.id)).toEqual(["1", "2"]);
  });

  it("selects stocks for every portfolio on the last rating date, and on most dates", () => {
    const { portfolios } = json();
    const ratings = readRecords(dirA, "ratings.csv");
    const priced = new Set(readCsv(dirA, "prices.csv").rows.map((r) => `${r[0]}|${r[6]}`));
    const byDate = new Map<string, Record<string, string>[]>();
    for (const r of ratings) byDate.set(r.date, [...(byDate.get(r.date) ?? []), r]);
    const dates = [...byDate.keys()].sort();
    const snake = (k: string) => k.replace(/[A-Z]/g, (m) => `_${m.toLowerCase()}`);
    const select = (p: { ranges: Record<string, [number, number]> }, date: string) =>
      byDate
        .get(date)!
        .filter(
          (r) =>
            priced.has(`${date}|${r.ticker}`) &&
            Object.entries(p.ranges).every(([k, [lo, hi]]) => Number(r[snake(k)]) >= lo && Number(r[snake(k)]) <= hi),
        );
    for (const p of portfolios) {
      expect(select(p, dates[dates.length - 1]).length, p.name).toBeGreaterThanOrEqual(1);
      const ok = dates.filter((d) => select(p, d).length >= 2).length;
      expect(ok / dates.length, p.name).toBeGreaterThan(0.9);
    }
  });
});
