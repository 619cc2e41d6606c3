// Point in time: altering every statement published after a date leaves every rating (and every
// component) on or before that date byte-identical, and changes some rating after it. Over the
// generated sample's prices and SimFin-layout statements, read from files as a run reads them.
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateSample } from "../../data/generate.ts";
import { factorModel, type ModelDate } from "../../pipeline/ratings/model.ts";
import { readModelStatements } from "../../pipeline/ratings/statements.ts";
import type { Company, PricePanel } from "../../pipeline/types.ts";
import { readRecords } from "../generator/helpers.ts";

const root = mkdtempSync(join(tmpdir(), "ratings-pit-"));
const src = join(root, "src");
afterAll(() => rmSync(root, { recursive: true, force: true }));

let panel: PricePanel;
let companies: Company[];
beforeAll(async () => {
  await generateSample(src, { companies: 60, years: 4, seed: 21 });
  const prices = readRecords(src, "prices.csv");
  const dates = [...new Set(prices.map((p) => p.date))].sort();
  const at = new Map(dates.map((d, i) => [d, i]));
  const tickers = [...new Set(prices.map((p) => p.ticker))].sort();
  const row = new Map(tickers.map((t, i) => [t, i]));
  const close = tickers.map(() => new Float64Array(dates.length).fill(NaN));
  for (const p of prices) close[row.get(p.ticker)!][at.get(p.date)!] = Number(p.close);
  panel = { dates, tickers, close };
  companies = readRecords(src, "companies.csv").map((c) => ({ ...c, sectorId: 0, industryId: 0 }) as never);
});

/** A copy of the fundamentals folder with every numeric cell of each row published after `date` scaled. */
function alteredAfter(date: string): string {
  const dir = join(root, `after-${date}`);
  cpSync(join(src, "fundamentals"), dir, { recursive: true });
  for (const f of readdirSync(dir)) {
    const lines = readFileSync(join(dir, f), "utf8").trimEnd().split("\n");
    const header = lines[0].split(";").map((c) => c.replaceAll('"', ""));
    const publish = header.indexOf("Publish Date");
    const first = header.indexOf("Shares (Basic)");
    const out = lines.map((l, i) => {
      const cells = l.split(";");
      if (i === 0 || cells[publish] <= date) return l;
      return cells.map((c, k) => (k >= first && c !== "" ? String(Math.round(Number(c) * 1.37 + 11)) : c)).join(";");
    });
    writeFileSync(join(dir, f), `${out.join("\n")}\n`);
  }
  return dir;
}

async function model(fundamentals: string): Promise<ModelDate[]> {
  const known = new Set(panel.tickers.map((t) => t.toUpperCase()));
  return [...factorModel(panel, companies, await readModelStatements(fundamentals, known))];
}

const bytes = (d: ModelDate) =>
  JSON.stringify({
    ratings: d.ratings,
    components: Object.values(d.components).map((col) => Array.from(col as ArrayLike<unknown>)),
  });

describe("the factor model, point in time", () => {
  it("is unchanged on or before a date by statements published after it, and changed after", async () => {
    const base = await model(join(src, "fundamentals"));
    const cut = base[Math.floor(base.length / 2)].date;
    const altered = await model(alteredAfter(cut));
    expect(altered.map((d) => d.date)).toEqual(base.map((d) => d.date));
    const before = base.filter((d) => d.date <= cut);
    expect(before.length).toBeGreaterThan(12);
    before.forEach((d, k) => {
      expect(bytes(altered[k]), d.date).toBe(bytes(d));
    });
    const changed = base.filter((d, k) => d.date > cut && bytes(altered[k]) !== bytes(d));
    expect(changed.length).toBeGreaterThan(0);
    // and a statement rating moves, not only a component: valuation reads the altered shares and earnings
    const after = base.findIndex((d) => d.date > cut && d.date >= changed[0].date);
    expect(JSON.stringify(altered[after].ratings)).not.toBe(JSON.stringify(base[after].ratings));
  });

  it("rates stocks with statements on them and records which statement", async () => {
    const base = await model(join(src, "fundamentals"));
    const last = base.at(-1)!;
    const c = last.components;
    const withStatement = c.tickers.filter((_, k) => c.fiscalYear[k] !== 0);
    // the generator leaves about 5 % of companies without statements
    expect(withStatement.length / c.tickers.length).toBeGreaterThan(0.8);
    c.publishDate.forEach((p, k) => {
      expect(p === null ? c.fiscalYear[k] === 0 : p <= last.date).toBe(true);
    });
    for (const r of last.ratings) for (const v of Object.values(r).slice(2)) expect(v).toBeGreaterThanOrEqual(0);
  });
});
