// Builds a source directory in a temp folder from ../shared/data (never copied into the repo):
// prices.csv is a symlink to all_stocks_5yr.csv, unchanged; companies.csv is made from the
// constituent lists; benchmarks.csv from the S&P 500 index levels over the same dates.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parse } from "csv-parse/sync";
import { stringify } from "csv-stringify/sync";
import { stageSource } from "../pipeline/sources/index.ts";
import { loadCompanies, loadIndexSeries, loadPanel } from "../pipeline/stages/frames.ts";
import { openDuck } from "../pipeline/store/duck/duck.ts";
import type { Market } from "./synthetic.ts";

export const SHARED_DATA = resolve(import.meta.dirname, "../../shared/data");
export const hasRealData = () => existsSync(join(SHARED_DATA, "all_stocks_5yr.csv"));

export function buildRealSource(dir: string, opts: { portfolios?: boolean } = {}): string {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  symlinkSync(join(SHARED_DATA, "all_stocks_5yr.csv"), join(dir, "prices.csv"));
  const old = parse(readFileSync(join(SHARED_DATA, "sp500_constituents_2018-04-02.csv")), { columns: true }) as Record<
    string,
    string
  >[];
  const now = parse(readFileSync(join(SHARED_DATA, "sp500_constituents.csv")), { columns: true }) as Record<
    string,
    string
  >[];
  const subIndustry = new Map(now.map((r) => [r.Symbol, r["GICS Sub-Industry"]]));
  const tickers = new Set<string>();
  const prices = readFileSync(join(SHARED_DATA, "all_stocks_5yr.csv"), "utf8");
  for (const line of prices.split("\n").slice(1)) {
    const t = line.slice(line.lastIndexOf(",") + 1).trim();
    if (t) tickers.add(t);
  }
  const byTicker = new Map(old.map((r) => [r.Symbol, r]));
  const companies = [...tickers].sort().map((t) => {
    const c = byTicker.get(t);
    const sector = c?.Sector ?? "Unclassified";
    return { ticker: t, name: c?.Name ?? t, sector, industry: subIndustry.get(t) ?? sector };
  });
  writeFileSync(join(dir, "companies.csv"), stringify(companies, { header: true }));
  const bench = parse(readFileSync(join(SHARED_DATA, "benchmark_sp500_daily.csv")), { columns: true }) as Record<
    string,
    string
  >[];
  const rowsOut = bench
    .filter((r) => r.Date >= "2013-02-08" && r.Date <= "2018-02-07")
    .map((r) => ({ date: r.Date, benchmark: "SP500", close: r.Close }));
  writeFileSync(join(dir, "benchmarks.csv"), stringify(rowsOut, { header: true }));
  if (opts.portfolios !== false) {
    writeFileSync(
      join(dir, "portfolios.json"),
      JSON.stringify(
        {
          portfolios: [],
          benchmarks: [
            {
              id: "1",
              name: "S&P 500",
              description: "S&P 500 index level (price only)",
              rebalanceFrequency: 0,
              series: "SP500",
            },
          ],
        },
        null,
        2,
      ),
    );
  }
  return dir;
}

/**
 * The real file through the project's own ingest: the staged price panel, companies (sectors from
 * the 2018 constituent list, no market caps) and the S&P 500 level as the benchmark.
 */
export async function loadRealMarket(): Promise<Market> {
  const db = await openDuck();
  try {
    const staged = await stageSource(db.conn, buildRealSource(mkdtempSync(join(tmpdir(), "bench-real-"))));
    if (staged.rejectCount) throw new Error(`real source rejected: ${staged.rejects[0]?.reason}`);
    const panel = await loadPanel(db.conn);
    const bench = [...(await loadIndexSeries(db.conn)).values()][0];
    // Staged companies have no ids yet (ingest assigns them); sectors are what selection needs.
    await db.conn.run(
      "create or replace table companies as select coalesce(id, ticker) id, ticker, name, sector, 0 sector_id, " +
        "industry, 0 industry_id, shares_outstanding, market_cap from companies",
    );
    const companies = await loadCompanies(db.conn);
    return { panel, companies, bench };
  } finally {
    db.close();
  }
}
