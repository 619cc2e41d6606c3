// Backtest time for every predefined portfolio of the sample and for rule sets on the real
// S&P 500 file (its ratings computed from prices), beside a baseline measured in the same run:
// one pass over the price panel touching every close (the floor for any daily backtest).
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureSampleSource } from "../jobs/sample.ts";
import { backtestPortfolio, buildUniverse } from "../pipeline/portfolios/index.ts";
import { computeRatings } from "../pipeline/ratings/computed.ts";
import { stageSource } from "../pipeline/sources/index.ts";
import { loadCompanies, loadPanel, loadRatings } from "../pipeline/stages/frames.ts";
import { openDuck } from "../pipeline/store/duck.ts";
import type { PortfolioRules, PricePanel } from "../pipeline/types.ts";
import { buildRealSource, hasRealData } from "./real-source.ts";

const silent = { info: () => undefined, warn: () => undefined };

function panelPass(p: PricePanel): number {
  const t = performance.now();
  let s = 0;
  for (const c of p.close) for (let i = 0; i < c.length; i++) if (c[i] === c[i]) s += c[i];
  if (s === 42) console.log(""); // keep the loop from being optimised away
  return performance.now() - t;
}

async function universeOf(dir: string) {
  const db = await openDuck();
  const s = await stageSource(db.conn, dir);
  const panel = await loadPanel(db.conn);
  // The staged companies table has no ids yet (ingest assigns them); sectors are what selection needs.
  await db.conn.run("create or replace table companies as select coalesce(id, ticker) id, ticker, name, sector, 0 sector_id, industry, 0 industry_id, shares_outstanding, market_cap from companies");
  const companies = await loadCompanies(db.conn);
  const ratings = s.tables.has("ratings") ? await loadRatings(db.conn) : computeRatings(panel, companies);
  db.close();
  return { u: buildUniverse(panel, companies, ratings), portfolios: s.portfolios.portfolios };
}

function time(rules: PortfolioRules[], u: ReturnType<typeof buildUniverse>, label: string) {
  const base = panelPass(u.panel);
  for (const r of rules) {
    const t = performance.now();
    const bt = backtestPortfolio(r, u);
    const ms = performance.now() - t;
    console.log(`${label} ${r.id} ${r.name.padEnd(24)} freq ${String(r.rebalanceFrequency).padStart(2)}m max ${String(r.maxStocks).padStart(3)}: ${ms.toFixed(1)} ms (${bt.rebalances.length} rebalances, ${bt.returns.dates.length} days) | one pass over the panel ${base.toFixed(1)} ms`);
  }
}

export async function benchPortfolios(): Promise<void> {
  console.log("\n== portfolios: backtests");
  const sample = await universeOf(await ensureSampleSource(join(tmpdir(), "bench-sample"), silent));
  time(sample.portfolios, sample.u, "sample");
  if (hasRealData()) {
    const real = await universeOf(buildRealSource(mkdtempSync(join(tmpdir(), "bench-real-"))));
    const rules: PortfolioRules[] = [1, 3, 6, 12].map((f, i) => ({
      id: `R${f}`,
      name: `real top ${10 + 10 * i}`,
      description: "",
      rebalanceFrequency: f,
      maxStocks: 10 + 10 * i,
      maxStocksCriteria: "total_rating",
      maxStocksCriteriaOrder: "descending",
      maxSectorConcentration: i % 2 ? 0.3 : null,
      ranges: { return_rating: [5, 10] },
    }));
    time(rules, real.u, "real  ");
  } else console.log("../shared/data absent: real-file figures skipped");
}

if (import.meta.url === `file://${process.argv[1]}`) await benchPortfolios();
