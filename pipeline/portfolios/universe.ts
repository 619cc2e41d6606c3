// The universe a backtest runs over: prices on one trading calendar, companies, and ratings
// indexed so "the ratings as of day d" is one array lookup.
import type { Company, PricePanel, RatingRow } from "../types.ts";

export interface Universe {
  panel: PricePanel; // shared trading calendar (a date with any price); close NaN = no price that day
  companies: Map<string, Company>; // by ticker
  ratingDates: string[]; // ascending distinct rating dates
  ratingsByDate: Map<string, Map<string, RatingRow>>; // rating date -> ticker -> row
  /** Row of each ticker in panel.close. */
  tickerIndex: Map<string, number>;
  /** For each trading day, the index in ratingDates of the latest rating date on or before it (-1: none). */
  asOfRating: Int32Array;
}

export function buildUniverse(panel: PricePanel, companies: Company[], ratings: RatingRow[]): Universe {
  const ratingsByDate = new Map<string, Map<string, RatingRow>>();
  for (const r of ratings) {
    let m = ratingsByDate.get(r.date);
    if (!m) ratingsByDate.set(r.date, (m = new Map()));
    m.set(r.ticker, r);
  }
  const ratingDates = [...ratingsByDate.keys()].sort();
  const asOfRating = new Int32Array(panel.dates.length);
  let k = -1;
  panel.dates.forEach((d, i) => {
    while (k + 1 < ratingDates.length && ratingDates[k + 1] <= d) k++;
    asOfRating[i] = k;
  });
  return {
    panel,
    companies: new Map(companies.map((c) => [c.ticker, c])),
    ratingDates,
    ratingsByDate,
    tickerIndex: new Map(panel.tickers.map((t, i) => [t, i])),
    asOfRating,
  };
}

/** Index of the first trading date on or after `date` (panel.dates.length when none). */
export function tradingIndexOnOrAfter(dates: string[], date: string): number {
  let lo = 0;
  let hi = dates.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (dates[mid] < date) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
