// A hand-built universe: 4 stocks over 6 trading days and 2 rating dates (numbers chosen so
// every value in the tests can be computed by hand).
import { buildUniverse } from "../../pipeline/portfolios/index.ts";
import { RATING_NAMES, type Company, type PortfolioRules, type RatingRow } from "../../pipeline/types.ts";

export const DATES = ["2024-01-31", "2024-02-01", "2024-02-02", "2024-02-29", "2024-03-01", "2024-03-04"];
const N = NaN;
export const CLOSES: Record<string, number[]> = {
  A: [10, 11, 12, 12, 12.6, N], // delisted after 2024-03-01
  B: [20, 20, 22, 24, 24, 24],
  C: [50, 45, N, 40, 40, 44], // no price on 2024-02-02
  D: [100, 100, 100, 100, 110, 121],
};
const SECTOR: Record<string, string> = { A: "Tech", B: "Tech", C: "Energy", D: "Health" };
const CAP: Record<string, number | null> = { A: 4e9, B: 1e9, C: null, D: 2e9 };
// total_rating by date; return_rating = total − 1; the rest 5.
const TOTAL: Record<string, Record<string, number>> = {
  "2024-01-31": { A: 9, B: 8, C: 8, D: 5 },
  "2024-02-29": { A: 5, B: 9, C: 3, D: 9 },
};

export function companies(): Company[] {
  return Object.keys(CLOSES).map((t, i) => ({ id: String(i + 1), ticker: t, name: `${t} Corp`, sector: SECTOR[t], sectorId: 1, industry: SECTOR[t], industryId: 1, sharesOutstanding: null, marketCap: CAP[t] }));
}

export function ratings(): RatingRow[] {
  return Object.entries(TOTAL).flatMap(([date, byTicker]) =>
    Object.entries(byTicker).map(([ticker, total]) => {
      const r = { date, ticker } as RatingRow;
      for (const n of RATING_NAMES) r[n] = 5;
      r.total_rating = total;
      r.return_rating = total - 1;
      return r;
    }),
  );
}

export function universe() {
  const tickers = Object.keys(CLOSES);
  return buildUniverse({ dates: DATES, tickers, close: tickers.map((t) => Float64Array.from(CLOSES[t])) }, companies(), ratings());
}

export function rules(over: Partial<PortfolioRules> = {}): PortfolioRules {
  return { id: "1", name: "p", description: "", rebalanceFrequency: 1, maxStocks: 2, maxStocksCriteria: "total_rating", maxStocksCriteriaOrder: "descending", maxSectorConcentration: null, ranges: {}, ...over };
}
