// Backtest time for five rule sets (frequencies 1, 3, 6, 12 months; 10..50 stocks; ranges and
// sector caps) on the synthetic 500-stock × 15-year market (bench/synthetic.ts), and on the real
// S&P 500 file when ../shared/data has it. Both get the ratings the pipeline computes from prices
// when a source has none (pipeline/ratings/computed.ts). Each figure is the median of
// several runs, beside a baseline from the same run: one pass over the panel touching every close.
import { backtestPortfolio, buildUniverse, type Universe } from "../pipeline/portfolios/index.ts";
import { computeRatings } from "../pipeline/ratings/computed.ts";
import type { PortfolioRules, PricePanel } from "../pipeline/types.ts";
import { hasRealData, loadRealMarket, SHARED_DATA } from "./real-source.ts";
import { type Market, syntheticMarket } from "./synthetic.ts";

const RULES: PortfolioRules[] = [
  {
    id: "B1",
    name: "top 10 total, monthly",
    description: "",
    rebalanceFrequency: 1,
    maxStocks: 10,
    maxStocksCriteria: "total_rating",
    maxStocksCriteriaOrder: "descending",
    maxSectorConcentration: null,
    ranges: {},
  },
  {
    id: "B2",
    name: "20 total, low risk, cap .3",
    description: "",
    rebalanceFrequency: 3,
    maxStocks: 20,
    maxStocksCriteria: "total_rating",
    maxStocksCriteriaOrder: "descending",
    maxSectorConcentration: 0.3,
    ranges: { risk_rating: [5, 10] },
  },
  {
    id: "B3",
    name: "30 value asc, cap .25",
    description: "",
    rebalanceFrequency: 6,
    maxStocks: 30,
    maxStocksCriteria: "return_rating",
    maxStocksCriteriaOrder: "ascending",
    maxSectorConcentration: 0.25,
    ranges: { growth_rating: [2, 8] },
  },
  {
    id: "B4",
    name: "40 by market cap, cap .2",
    description: "",
    rebalanceFrequency: 12,
    maxStocks: 40,
    maxStocksCriteria: "market_cap",
    maxStocksCriteriaOrder: "descending",
    maxSectorConcentration: 0.2,
    ranges: { total_rating: [4, 10] },
  },
  {
    id: "B5",
    name: "50 technical, 2 ranges, cap .2",
    description: "",
    rebalanceFrequency: 1,
    maxStocks: 50,
    maxStocksCriteria: "technical_rating",
    maxStocksCriteriaOrder: "descending",
    maxSectorConcentration: 0.2,
    ranges: { return_rating: [4, 10], risk_rating: [2, 9] },
  },
];

function panelPass(p: PricePanel): number {
  const t = performance.now();
  let s = 0;
  for (const c of p.close) for (let i = 0; i < c.length; i++) if (!Number.isNaN(c[i])) s += c[i];
  if (s === 42) console.log(""); // keep the loop from being optimised away
  return performance.now() - t;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function timeAll(label: string, market: Market, runs = 5): void {
  let t = performance.now();
  const ratings = computeRatings(market.panel, market.companies);
  const tRatings = performance.now() - t;
  t = performance.now();
  const u: Universe = buildUniverse(market.panel, market.companies, ratings);
  const tUniverse = performance.now() - t;
  const base = median(Array.from({ length: runs }, () => panelPass(market.panel)));
  console.log(
    `${label}: ${market.panel.tickers.length} stocks × ${market.panel.dates.length} days, ${u.ratingDates.length} ` +
      `rating dates (${ratings.length} rows, built in ${tRatings.toFixed(0)} ms); ` +
      `buildUniverse ${tUniverse.toFixed(1)} ms; one pass over the panel ${base.toFixed(1)} ms`,
  );
  for (const r of RULES) {
    // The first run also sorts each rating date's rank order for this criteria (memoised in the
    // universe and shared by later portfolios); the median is of runs after it.
    let s0 = performance.now();
    let bt = backtestPortfolio(r, u);
    const cold = performance.now() - s0;
    const ms = median(
      Array.from({ length: runs }, () => {
        s0 = performance.now();
        bt = backtestPortfolio(r, u);
        return performance.now() - s0;
      }),
    );
    const held = bt.rebalances.reduce((a, x) => a + x.holdings.length, 0) / Math.max(1, bt.rebalances.length);
    const total = bt.returns.returns.reduce((v, x) => v * (1 + x), 1) - 1;
    console.log(
      `  ${r.id} ${r.name.padEnd(32)} freq ${String(r.rebalanceFrequency).padStart(2)}m ` +
        `max ${String(r.maxStocks).padStart(2)}: ${ms.toFixed(2).padStart(6)} ms (first ` +
        `run ${cold.toFixed(2).padStart(6)} ms)  (${bt.rebalances.length} rebalances, ${held.toFixed(1)} held on ` +
        `average, ${bt.returns.dates.length} days, total return ${(100 * total).toFixed(1)}%)`,
    );
  }
}

export async function benchPortfolios(): Promise<void> {
  console.log("\n== portfolios: backtests, ms per portfolio (median of 5 runs after the first)");
  timeAll("synthetic", syntheticMarket());
  // The real file has no market caps: B4 there ranks every stock last alike, so ties by ticker.
  if (hasRealData()) timeAll("real S&P 500 5yr", await loadRealMarket());
  else console.log(`${SHARED_DATA}/all_stocks_5yr.csv absent: real-file figures skipped`);
}

if (import.meta.url === `file://${process.argv[1]}`) await benchPortfolios();
