// The default sample (500 companies, 15 years): its sizes. Generation time is in `npm run bench`.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { generateSample } from "../../data/generate.ts";
import { readRecords } from "./helpers.ts";

const dir = mkdtempSync(join(tmpdir(), "gen-default-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("default sample", () => {
  it("generates 500 companies over 15 years with listings, delistings and statements", async () => {
    await generateSample(dir);
    const companies = readRecords(dir, "companies.csv");
    expect(companies).toHaveLength(500);
    expect(new Set(companies.map((c) => c.sector)).size).toBe(11);
    expect(new Set(companies.map((c) => c.industry)).size).toBeGreaterThanOrEqual(55);

    const text = readFileSync(join(dir, "prices.csv"), "utf8");
    const first = new Map<string, string>();
    const last = new Map<string, string>();
    let start = "9999";
    let end = "0000";
    for (let i = text.indexOf("\n") + 1; i < text.length; ) {
      const j = text.indexOf("\n", i);
      const date = text.slice(i, i + 10);
      const ticker = text.slice(text.lastIndexOf(",", j) + 1, j);
      if (!first.has(ticker)) first.set(ticker, date);
      last.set(ticker, date);
      if (date < start) start = date;
      if (date > end) end = date;
      i = j + 1;
    }
    expect([start, end]).toEqual(["2011-01-03", "2025-12-31"]);
    const listings = [...first.values()].filter((d) => d > start).length;
    const delistings = [...last.values()].filter((d) => d < end).length;
    expect(listings).toBeGreaterThanOrEqual(5);
    expect(listings + delistings).toBeGreaterThanOrEqual(10);
    expect(listings + delistings).toBeLessThanOrEqual(20);

    const withStatements = new Set(
      readRecords(join(dir, "fundamentals"), "us-income-annual.csv", ";").map((r) => r.Ticker),
    );
    expect(withStatements.size).toBeGreaterThanOrEqual(460);
    expect(withStatements.size).toBeLessThan(500);
  });
});
