// Hand-built universes small enough that every value in the tests can be computed by hand.
import { buildUniverse } from "../../pipeline/portfolios/index.ts";
import {
  type Company,
  type PortfolioRules,
  RATING_NAMES,
  type RatingName,
  type RatingRow,
} from "../../pipeline/types.ts";

export const N = NaN;

export interface Spec {
  dates: string[];
  closes: Record<string, number[]>; // ticker -> close per date (NaN: no price)
  sectors: Record<string, string>;
  caps?: Record<string, number | null>;
  /** rating date -> ticker -> the ratings that differ from 5. */
  ratings: Record<string, Record<string, Partial<Record<RatingName, number>>>>;
}

export function companiesOf(spec: Spec): Company[] {
  return Object.keys(spec.closes).map((t, i) => ({
    id: String(i + 1),
    ticker: t,
    name: `${t} Corp`,
    sector: spec.sectors[t],
    sectorId: 1,
    industry: spec.sectors[t],
    industryId: 1,
    sharesOutstanding: null,
    marketCap: spec.caps?.[t] ?? null,
  }));
}

export function ratingsOf(spec: Spec): RatingRow[] {
  return Object.entries(spec.ratings).flatMap(([date, byTicker]) =>
    Object.entries(byTicker).map(([ticker, given]) => {
      const r = { date, ticker } as RatingRow;
      for (const n of RATING_NAMES) r[n] = given[n] ?? 5;
      return r;
    }),
  );
}

export function universeOf(spec: Spec) {
  const tickers = Object.keys(spec.closes);
  return buildUniverse(
    { dates: spec.dates, tickers, close: tickers.map((t) => Float64Array.from(spec.closes[t])) },
    companiesOf(spec),
    ratingsOf(spec),
  );
}

export function rules(over: Partial<PortfolioRules> = {}): PortfolioRules {
  return {
    id: "1",
    name: "p",
    description: "",
    rebalanceFrequency: 1,
    maxStocks: 2,
    maxStocksCriteria: "total_rating",
    maxStocksCriteriaOrder: "descending",
    maxSectorConcentration: null,
    ranges: {},
    ...over,
  };
}

/** `rules` without the id, as a user portfolio is created in the catalog. */
export function userRules(over: Partial<PortfolioRules> = {}): Omit<PortfolioRules, "id"> {
  const { id: _id, ...r } = rules(over);
  return r;
}

// Winter: 4 stocks, 6 trading days, 2 monthly rebalances (31 Jan, 29 Feb). total_rating as
// below, return_rating = total − 1, the rest 5.
const winterTotals: Record<string, Record<string, number>> = {
  "2024-01-31": { A: 9, B: 8, C: 8, D: 5 },
  "2024-02-29": { A: 5, B: 9, C: 3, D: 9 },
};
export const WINTER: Spec = {
  dates: ["2024-01-31", "2024-02-01", "2024-02-02", "2024-02-29", "2024-03-01", "2024-03-04"],
  closes: {
    A: [10, 11, 12, 12, 12.6, N], // delisted after 2024-03-01
    B: [20, 20, 22, 24, 24, 24],
    C: [50, 45, N, 40, 40, 44], // no price on 2024-02-02
    D: [100, 100, 100, 100, 110, 121],
  },
  sectors: { A: "Tech", B: "Tech", C: "Energy", D: "Health" },
  caps: { A: 4e9, B: 1e9, C: null, D: 2e9 },
  ratings: Object.fromEntries(
    Object.entries(winterTotals).map(([d, m]) => [
      d,
      Object.fromEntries(Object.entries(m).map(([t, v]) => [t, { total_rating: v, return_rating: v - 1 }])),
    ]),
  ),
};

// Autumn: 5 stocks, 7 trading days, 3 monthly rebalances. Ratings are dated month ends; the
// first, Sat 31 Aug, moves to Mon 2 Sep; then 30 Sep (31 clamped), 31 Oct (from the first date,
// not 30 Oct), and the next, Sat 30 Nov, lies past the data.
export const AUTUMN: Spec = {
  dates: ["2024-09-02", "2024-09-16", "2024-09-30", "2024-10-15", "2024-10-31", "2024-11-15", "2024-11-29"],
  closes: {
    P: [10, 12, 11, 11, 10, 10, 12],
    Q: [20, 20, 23, 24, 25, 30, 30],
    R: [40, 40, 40, 50, 50, 55, 60],
    S: [5, 6, N, N, N, N, N], // last price 16 Sep: held as cash until 30 Sep
    T: [8, 8, 8, 10, 8, N, 9], // no price 15 Nov: keeps 8
  },
  sectors: { P: "Tech", Q: "Tech", R: "Tech", S: "Energy", T: "Utilities" },
  ratings: {
    "2024-08-31": {
      P: { total_rating: 9 },
      Q: { total_rating: 8 },
      R: { total_rating: 7 },
      S: { total_rating: 6 },
      T: { total_rating: 6, risk_rating: 9 },
    },
    "2024-09-30": {
      P: { total_rating: 4 },
      Q: { total_rating: 9 },
      R: { total_rating: 9, risk_rating: 2 },
      S: { total_rating: 3 },
      T: { total_rating: 8, risk_rating: 8 },
    },
    "2024-10-31": { P: { total_rating: 9 }, Q: { total_rating: 9 }, R: { total_rating: 9 }, T: { total_rating: 1 } },
  },
};
/** Autumn's rules: top 3 by total, risk in [2, 8], at most floor(0.67 × 3) = 2 per sector. */
export const autumnRules = (over: Partial<PortfolioRules> = {}) =>
  rules({ maxStocks: 3, maxSectorConcentration: 0.67, ranges: { risk_rating: [2, 8] }, ...over });
