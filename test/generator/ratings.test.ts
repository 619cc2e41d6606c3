// ratings.csv: monthly, 0..10 with four decimals, only for trading stocks, from past data only.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateSample } from "../../data/generate.ts";
import { MIN_HISTORY } from "../../data/generator/ratings.ts";
import { readCsv, SMALL } from "./helpers.ts";

const dir = mkdtempSync(join(tmpdir(), "gen-ratings-"));
beforeAll(async () => {
  await generateSample(dir, { seed: 3, ...SMALL, vendorRatings: true });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const COLS = [
  "total_rating",
  "return_rating",
  "growth_rating",
  "risk_rating",
  "valuation_rating",
  "technical_rating",
  "macro_rating",
];

describe("ratings.csv", () => {
  it("has the layout and values from 0 to 10 with exactly four decimals", () => {
    const { header, rows } = readCsv(dir, "ratings.csv");
    expect(header).toEqual(["date", "ticker", ...COLS]);
    const bad = rows.filter((r) =>
      r.slice(2).some((v) => !/^\d{1,2}\.\d{4}$/.test(v) || Number(v) < 0 || Number(v) > 10),
    );
    expect(bad).toEqual([]);
    expect(new Set(rows.map((r) => `${r[0]}|${r[1]}`)).size).toBe(rows.length);
  });

  it("is dated on the first trading date of every month from the second year on, for trading stocks only", () => {
    const prices = readCsv(dir, "prices.csv").rows;
    const dates = [...new Set(prices.map((r) => r[0]))].sort();
    const firstOfMonth = dates.filter((d, i) => i === 0 || dates[i - 1].slice(0, 7) !== d.slice(0, 7));
    const { rows } = readCsv(dir, "ratings.csv");
    const ratingDates = [...new Set(rows.map((r) => r[0]))].sort();
    expect(ratingDates).toEqual(firstOfMonth.slice(12));
    expect(ratingDates[0]).toBe(firstOfMonth[12]);
    expect(ratingDates).toHaveLength((SMALL.years - 1) * 12);

    const index = new Map(dates.map((d, i) => [d, i]));
    const firstPrice = new Map<string, number>();
    const priced = new Set<string>();
    for (const r of prices) {
      if (!firstPrice.has(r[6])) firstPrice.set(r[6], index.get(r[0])!);
      priced.add(`${r[0]}|${r[6]}`);
    }
    for (const r of rows) {
      expect(priced.has(`${r[0]}|${r[1]}`)).toBe(true);
      expect(index.get(r[0])! - 1 - firstPrice.get(r[1])!).toBeGreaterThanOrEqual(MIN_HISTORY);
    }
    // Every trading stock with enough history is rated on the last date.
    const last = ratingDates[ratingDates.length - 1];
    const d = index.get(last)!;
    const eligible = [...firstPrice]
      .filter(([t, f]) => priced.has(`${last}|${t}`) && d - 1 - f >= MIN_HISTORY)
      .map(([t]) => t);
    expect(
      rows
        .filter((r) => r[0] === last)
        .map((r) => r[1])
        .sort(),
    ).toEqual(eligible.sort());
  });

  it("ranks return and risk by the trailing prices up to the previous trading date (no look-ahead)", () => {
    const prices = readCsv(dir, "prices.csv").rows;
    const dates = [...new Set(prices.map((r) => r[0]))].sort();
    const close = new Map<string, Map<string, number>>();
    for (const r of prices) {
      if (!close.has(r[6])) close.set(r[6], new Map());
      close.get(r[6])!.set(r[0], Number(r[4]));
    }
    const { rows } = readCsv(dir, "ratings.csv");
    const last = rows[rows.length - 1][0];
    const p = dates.indexOf(last) - 1;
    const full = rows.filter((r) => r[0] === last && close.get(r[1])!.has(dates[p - 252]));
    expect(full.length).toBeGreaterThan(20);
    const trailing = (t: string) => close.get(t)!.get(dates[p])! / close.get(t)!.get(dates[p - 252])! - 1;
    const vol = (t: string) => {
      const c = close.get(t)!;
      const lr = Array.from({ length: 126 }, (_, k) => Math.log(c.get(dates[p - k])! / c.get(dates[p - k - 1])!));
      const m = lr.reduce((a, b) => a + b, 0) / lr.length;
      return Math.sqrt(lr.reduce((a, b) => a + (b - m) ** 2, 0) / lr.length);
    };
    const byReturn = [...full].sort((a, b) => trailing(a[1]) - trailing(b[1]));
    for (let k = 1; k < byReturn.length; k++)
      expect(Number(byReturn[k][3])).toBeGreaterThanOrEqual(Number(byReturn[k - 1][3]));
    const byVol = [...full].sort((a, b) => vol(a[1]) - vol(b[1]));
    for (let k = 1; k < byVol.length; k++) expect(Number(byVol[k][5])).toBeLessThanOrEqual(Number(byVol[k - 1][5]));
  });

  it("gives one macro rating per sector and a total that blends the parts", () => {
    const { rows } = readCsv(dir, "ratings.csv");
    for (const r of rows) {
      const v = r.slice(2).map(Number);
      expect(v[0]).toBeGreaterThanOrEqual(Math.min(...v.slice(1)) - 1e-4);
      expect(v[0]).toBeLessThanOrEqual(Math.max(...v.slice(1)) + 1e-4);
    }
    const spread = new Set(rows.map((r) => r[2])).size;
    expect(spread).toBeGreaterThan(rows.length / 4);
  });
});
