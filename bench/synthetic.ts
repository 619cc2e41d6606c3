// A seeded synthetic market built in memory for the analytics and portfolio benchmarks: business
// days over `years`, closes driven by a market factor (the benchmark level) plus noise per stock;
// a fifth list late, a twentieth delist early, ~1% of prices are missing; 11 sectors and market
// caps. Much faster than generating and ingesting the sample source, and the same every run.
import type { Company, LevelSeries, PricePanel } from "../pipeline/types.ts";

const SECTORS = [
  "Tech",
  "Health",
  "Financials",
  "Energy",
  "Industrials",
  "Utilities",
  "Materials",
  "Staples",
  "Discretionary",
  "Telecom",
  "Real Estate",
];

export interface Market {
  panel: PricePanel;
  companies: Company[];
  bench: LevelSeries;
}

export function syntheticMarket(stocks = 500, years = 15, seed = 42): Market {
  let s = seed >>> 0;
  const rnd = () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 4294967296;
  };
  const normal = () => Math.sqrt(-2 * Math.log(rnd() || 1e-12)) * Math.cos(2 * Math.PI * rnd());
  const dates: string[] = [];
  for (let t = Date.UTC(2009, 0, 2); dates.length < years * 252; t += 86_400_000) {
    const wd = new Date(t).getUTCDay();
    if (wd !== 0 && wd !== 6) dates.push(new Date(t).toISOString().slice(0, 10));
  }
  const n = dates.length;
  const market = Float64Array.from({ length: n }, () => 0.0003 + 0.011 * normal());
  const levels = new Float64Array(n);
  for (let d = 0, v = 1000; d < n; d++) levels[d] = v *= 1 + market[d];
  const close: Float64Array[] = [];
  const tickers: string[] = [];
  const companies: Company[] = [];
  for (let i = 0; i < stocks; i++) {
    const ticker = `S${String(i).padStart(3, "0")}`;
    tickers.push(ticker);
    const beta = 0.5 + rnd(),
      vol = 0.008 + 0.02 * rnd();
    const start = rnd() < 0.2 ? Math.floor(rnd() * n * 0.6) : 0;
    const end = rnd() < 0.05 ? n - Math.floor(rnd() * n * 0.3) : n;
    const c = new Float64Array(n).fill(NaN);
    for (let d = start, p = 10 + 90 * rnd(); d < end; d++) {
      p *= 1 + beta * market[d] + vol * normal();
      if (rnd() > 0.01) c[d] = p;
    }
    close.push(c);
    const k = i % SECTORS.length;
    companies.push({
      id: String(i + 1),
      ticker,
      name: `${ticker} Inc`,
      sector: SECTORS[k],
      sectorId: k,
      industry: SECTORS[k],
      industryId: k,
      sharesOutstanding: null,
      marketCap: Math.round(1e8 + rnd() * 5e11),
    });
  }
  return { panel: { dates, tickers, close }, companies, bench: { dates, levels } };
}
