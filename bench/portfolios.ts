// Backtest time for five rule sets (frequencies 1, 3, 6, 12 months; 10..50 stocks; ranges and
// sector caps) on a synthetic 500-stock × 15-year universe built here, and on the real S&P 500
// file when ../shared/data has it. Both get monthly ratings computed here from trailing returns
// and volatility, so the figures do not depend on the ratings stage. Each figure is the median of
// several runs, beside a baseline from the same run: one pass over the panel touching every close.
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parse } from "csv-parse/sync";
import { backtestPortfolio, buildUniverse, type Universe } from "../pipeline/portfolios/index.ts";
import { type Company, type PortfolioRules, type PricePanel, type RatingRow } from "../pipeline/types.ts";

const DATA = resolve(import.meta.dirname, "../../shared/data");
const SECTORS = ["Tech", "Health", "Financials", "Energy", "Industrials", "Utilities", "Materials", "Staples", "Discretionary", "Telecom", "Real Estate"];

/** Deterministic PRNG (mulberry32), so every run benches the same universe. */
function rng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function weekdays(from: string, years: number): string[] {
  const out: string[] = [];
  const d = new Date(`${from}T00:00:00Z`);
  const end = new Date(d);
  end.setUTCFullYear(end.getUTCFullYear() + years);
  for (; d < end; d.setUTCDate(d.getUTCDate() + 1)) if (d.getUTCDay() % 6 !== 0) out.push(d.toISOString().slice(0, 10));
  return out;
}

/** 500 random-walk stocks over 15 years; a tenth list late and a tenth delist early. */
function syntheticMarket(nStocks = 500, years = 15): { panel: PricePanel; companies: Company[] } {
  const rand = rng(42);
  const gauss = () => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
  const dates = weekdays("2010-01-01", years);
  const tickers: string[] = [];
  const close: Float64Array[] = [];
  const companies: Company[] = [];
  for (let i = 0; i < nStocks; i++) {
    const ticker = `S${String(i).padStart(3, "0")}`;
    const drift = 0.0002 + 0.0004 * (rand() - 0.5);
    const vol = 0.01 + 0.02 * rand();
    const first = i % 10 === 3 ? Math.floor(rand() * dates.length * 0.5) : 0;
    const last = i % 10 === 7 ? Math.floor(dates.length * (0.5 + 0.5 * rand())) : dates.length;
    const c = new Float64Array(dates.length).fill(NaN);
    let p = 10 + 90 * rand();
    for (let d = first; d < last; d++) c[d] = p *= Math.exp(drift + vol * gauss());
    tickers.push(ticker);
    close.push(c);
    const sector = SECTORS[i % SECTORS.length];
    companies.push({ id: String(i + 1), ticker, name: `${ticker} Inc`, sector, sectorId: i % SECTORS.length, industry: sector, industryId: 0, sharesOutstanding: null, marketCap: Math.round(1e8 + rand() * 5e11) });
  }
  return { panel: { dates, tickers, close }, companies };
}

/** Percentile scores 0..10 of the finite values (NaN stays NaN); ties broken by position. */
function scores(values: Float64Array, higherIsBetter: boolean): Float64Array {
  const idx = [...values.keys()].filter((i) => Number.isFinite(values[i]));
  idx.sort((a, b) => (higherIsBetter ? values[a] - values[b] : values[b] - values[a]));
  const out = new Float64Array(values.length).fill(NaN);
  idx.forEach((i, r) => (out[i] = idx.length > 1 ? (10 * r) / (idx.length - 1) : 5));
  return out;
}

/**
 * Monthly ratings on each month's last trading date: return (12-month return), growth (6-month),
 * technical (3-month), risk (low 3-month volatility scores high), valuation (low 12-month return
 * scores high), macro (the sector's mean 6-month return); total = their mean. A stock needs a
 * year of history and a price that day.
 */
function monthlyRatings(panel: PricePanel, companies: Company[]): RatingRow[] {
  const sectorOf = new Map(companies.map((c) => [c.ticker, c.sector]));
  const n = panel.tickers.length;
  const rows: RatingRow[] = [];
  const r4 = (x: number) => Math.round(x * 1e4) / 1e4;
  for (let d = 252; d < panel.dates.length; d++) {
    const monthEnd = d === panel.dates.length - 1 || panel.dates[d + 1].slice(0, 7) !== panel.dates[d].slice(0, 7);
    if (!monthEnd) continue;
    const [r3, r6, r12, vol] = [0, 1, 2, 3].map(() => new Float64Array(n).fill(NaN));
    for (let i = 0; i < n; i++) {
      const c = panel.close[i];
      if (!(c[d] > 0 && c[d - 252] > 0 && c[d - 126] > 0 && c[d - 63] > 0)) continue;
      r3[i] = c[d] / c[d - 63] - 1;
      r6[i] = c[d] / c[d - 126] - 1;
      r12[i] = c[d] / c[d - 252] - 1;
      let s = 0, s2 = 0, k = 0;
      for (let j = d - 62; j <= d; j++) {
        const x = Math.log(c[j] / c[j - 1]);
        if (Number.isFinite(x)) (s += x), (s2 += x * x), k++;
      }
      vol[i] = k > 1 ? Math.sqrt(Math.max(0, s2 / k - (s / k) ** 2)) : NaN;
    }
    const bySector = new Map<string, number[]>();
    for (let i = 0; i < n; i++) {
      if (!Number.isFinite(r6[i])) continue;
      const s = sectorOf.get(panel.tickers[i]) ?? "";
      if (!bySector.has(s)) bySector.set(s, []);
      bySector.get(s)!.push(r6[i]);
    }
    const sectorMean = new Map([...bySector].map(([s, v]) => [s, v.reduce((a, b) => a + b, 0) / v.length]));
    const macroIn = Float64Array.from(panel.tickers, (t, i) => (Number.isFinite(r6[i]) ? sectorMean.get(sectorOf.get(t) ?? "")! : NaN));
    const ret = scores(r12, true), gro = scores(r6, true), tec = scores(r3, true), risk = scores(vol, false), val = scores(r12, false), mac = scores(macroIn, true);
    for (let i = 0; i < n; i++) {
      if (!Number.isFinite(ret[i]) || !Number.isFinite(risk[i])) continue;
      const parts = [ret[i], gro[i], risk[i], val[i], tec[i], mac[i]];
      const row = { date: panel.dates[d], ticker: panel.tickers[i] } as RatingRow;
      [row.return_rating, row.growth_rating, row.risk_rating, row.valuation_rating, row.technical_rating, row.macro_rating] = parts.map(r4);
      row.total_rating = r4(parts.reduce((a, b) => a + b, 0) / parts.length);
      rows.push(row);
    }
  }
  return rows;
}

/** The real file: one panel from date,open,high,low,close,volume,Name rows; sectors from the 2018 list. */
function realMarket(): { panel: PricePanel; companies: Company[] } {
  const text = readFileSync(join(DATA, "all_stocks_5yr.csv"), "utf8");
  const lines = text.split("\n");
  const header = lines[0].trim().split(",");
  const [iDate, iClose, iName] = ["date", "close", "Name"].map((h) => header.indexOf(h));
  const byTicker = new Map<string, Map<string, number>>();
  const dateSet = new Set<string>();
  for (let k = 1; k < lines.length; k++) {
    const f = lines[k].trim().split(",");
    if (f.length < header.length || f[iClose] === "") continue;
    const t = f[iName];
    if (!byTicker.has(t)) byTicker.set(t, new Map());
    byTicker.get(t)!.set(f[iDate], Number(f[iClose]));
    dateSet.add(f[iDate]);
  }
  const dates = [...dateSet].sort();
  const tickers = [...byTicker.keys()].sort();
  const close = tickers.map((t) => Float64Array.from(dates, (d) => byTicker.get(t)!.get(d) ?? NaN));
  const list = parse(readFileSync(join(DATA, "sp500_constituents_2018-04-02.csv")), { columns: true }) as Record<string, string>[];
  const info = new Map(list.map((r) => [r.Symbol, r]));
  const companies = tickers.map((t, i): Company => {
    const sector = info.get(t)?.Sector ?? "Unclassified";
    return { id: String(i + 1), ticker: t, name: info.get(t)?.Name ?? t, sector, sectorId: 0, industry: sector, industryId: 0, sharesOutstanding: null, marketCap: null };
  });
  return { panel: { dates, tickers, close }, companies };
}

const RULES: PortfolioRules[] = [
  { id: "B1", name: "top 10 total, monthly", description: "", rebalanceFrequency: 1, maxStocks: 10, maxStocksCriteria: "total_rating", maxStocksCriteriaOrder: "descending", maxSectorConcentration: null, ranges: {} },
  { id: "B2", name: "20 total, low risk, cap .3", description: "", rebalanceFrequency: 3, maxStocks: 20, maxStocksCriteria: "total_rating", maxStocksCriteriaOrder: "descending", maxSectorConcentration: 0.3, ranges: { risk_rating: [5, 10] } },
  { id: "B3", name: "30 value asc, cap .25", description: "", rebalanceFrequency: 6, maxStocks: 30, maxStocksCriteria: "return_rating", maxStocksCriteriaOrder: "ascending", maxSectorConcentration: 0.25, ranges: { growth_rating: [2, 8] } },
  { id: "B4", name: "40 by market cap, cap .2", description: "", rebalanceFrequency: 12, maxStocks: 40, maxStocksCriteria: "market_cap", maxStocksCriteriaOrder: "descending", maxSectorConcentration: 0.2, ranges: { total_rating: [4, 10] } },
  { id: "B5", name: "50 technical, 2 ranges, cap .2", description: "", rebalanceFrequency: 1, maxStocks: 50, maxStocksCriteria: "technical_rating", maxStocksCriteriaOrder: "descending", maxSectorConcentration: 0.2, ranges: { return_rating: [4, 10], risk_rating: [2, 9] } },
];

function panelPass(p: PricePanel): number {
  const t = performance.now();
  let s = 0;
  for (const c of p.close) for (let i = 0; i < c.length; i++) if (c[i] === c[i]) s += c[i];
  if (s === 42) console.log(""); // keep the loop from being optimised away
  return performance.now() - t;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function timeAll(label: string, market: { panel: PricePanel; companies: Company[] }, runs = 5): void {
  let t = performance.now();
  const ratings = monthlyRatings(market.panel, market.companies);
  const tRatings = performance.now() - t;
  t = performance.now();
  const u: Universe = buildUniverse(market.panel, market.companies, ratings);
  const tUniverse = performance.now() - t;
  const base = median(Array.from({ length: runs }, () => panelPass(market.panel)));
  console.log(`${label}: ${market.panel.tickers.length} stocks × ${market.panel.dates.length} days, ${u.ratingDates.length} rating dates (${ratings.length} rows, built in ${tRatings.toFixed(0)} ms); buildUniverse ${tUniverse.toFixed(1)} ms; one pass over the panel ${base.toFixed(1)} ms`);
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
    console.log(`  ${r.id} ${r.name.padEnd(32)} freq ${String(r.rebalanceFrequency).padStart(2)}m max ${String(r.maxStocks).padStart(2)}: ${ms.toFixed(2).padStart(6)} ms (first run ${cold.toFixed(2).padStart(6)} ms)  (${bt.rebalances.length} rebalances, ${held.toFixed(1)} held on average, ${bt.returns.dates.length} days, total return ${(100 * total).toFixed(1)}%)`);
  }
}

export async function benchPortfolios(): Promise<void> {
  console.log("\n== portfolios: backtests, ms per portfolio (median of 5 runs after the first)");
  timeAll("synthetic", syntheticMarket());
  // The real file has no market caps: B4 there ranks every stock last alike, so ties by ticker.
  if (existsSync(join(DATA, "all_stocks_5yr.csv"))) timeAll("real S&P 500 5yr", realMarket());
  else console.log(`${DATA}/all_stocks_5yr.csv absent: real-file figures skipped`);
}

if (import.meta.url === `file://${process.argv[1]}`) await benchPortfolios();
