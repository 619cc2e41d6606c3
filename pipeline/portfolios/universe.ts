// The universe a backtest runs over: prices on one trading calendar, companies, and ratings
// indexed once so that "the ratings as of day d" is one array lookup and a selection is a scan
// over typed columns (no map lookups or allocations per candidate).

import { lowerBound } from "../shared/lower-bound.ts";
import { type Company, type PricePanel, RATING_NAMES, type RatingName, type RatingRow } from "../types.ts";

/** One rating date's rows as columns, ordered by ticker (so a position order is ticker order). */
export interface RatingSlice {
  rows: RatingRow[];
  /** Row of each ticker in panel.close; -1 when the panel has no prices for it. */
  panelRow: Int32Array;
  /** Sector of each ticker as a small integer (a ticker without a company shares one "" sector). */
  sector: Int32Array;
  /** Company market cap; NaN when unknown. */
  marketCap: Float64Array;
  values: Record<RatingName, Float64Array>;
  /** Rank orders by criteria and direction, memoised on first use (see rankedPositions). */
  orders: Map<string, Int32Array>;
}

export interface Universe {
  panel: PricePanel; // shared trading calendar (a date with any price); close NaN = no price that day
  companies: Map<string, Company>; // by ticker
  ratingDates: string[]; // ascending distinct rating dates
  ratingsByDate: Map<string, Map<string, RatingRow>>; // rating date -> ticker -> row
  /** Row of each ticker in panel.close. */
  tickerIndex: Map<string, number>;
  /** For each trading day, the index in ratingDates of the latest rating date on or before it (-1: none). */
  asOfRating: Int32Array;
  /** Per rating date (same index as ratingDates), its rows as columns. */
  slices: RatingSlice[];
  /** Number of distinct sector ids used in the slices. */
  sectorCount: number;
}

export function buildUniverse(panel: PricePanel, companies: Company[], ratings: RatingRow[]): Universe {
  const ratingsByDate = new Map<string, Map<string, RatingRow>>();
  for (const r of ratings) {
    let m = ratingsByDate.get(r.date);
    if (!m) {
      m = new Map();
      ratingsByDate.set(r.date, m);
    }
    m.set(r.ticker, r);
  }
  const ratingDates = [...ratingsByDate.keys()].sort();
  const asOfRating = new Int32Array(panel.dates.length);
  let k = -1;
  panel.dates.forEach((d, i) => {
    while (k + 1 < ratingDates.length && ratingDates[k + 1] <= d) k++;
    asOfRating[i] = k;
  });
  const companyMap = new Map(companies.map((c) => [c.ticker, c]));
  const tickerIndex = new Map(panel.tickers.map((t, i) => [t, i]));
  const sectorIds = new Map<string, number>();
  const sectorId = (s: string) => {
    let id = sectorIds.get(s);
    if (id === undefined) {
      id = sectorIds.size;
      sectorIds.set(s, id);
    }
    return id;
  };
  const slices = ratingDates.map((date): RatingSlice => {
    const rows = [...ratingsByDate.get(date)!.values()].sort((a, b) =>
      a.ticker < b.ticker ? -1 : a.ticker > b.ticker ? 1 : 0,
    );
    const values = {} as Record<RatingName, Float64Array>;
    for (const name of RATING_NAMES)
      values[name] = Float64Array.from(rows, (r) => (typeof r[name] === "number" ? r[name] : NaN));
    return {
      rows,
      panelRow: Int32Array.from(rows, (r) => tickerIndex.get(r.ticker) ?? -1),
      sector: Int32Array.from(rows, (r) => sectorId(companyMap.get(r.ticker)?.sector ?? "")),
      marketCap: Float64Array.from(rows, (r) => companyMap.get(r.ticker)?.marketCap ?? NaN),
      values,
      orders: new Map(),
    };
  });
  return {
    panel,
    companies: companyMap,
    ratingDates,
    ratingsByDate,
    tickerIndex,
    asOfRating,
    slices,
    sectorCount: sectorIds.size,
  };
}

/**
 * Positions of a slice in rank order: by the criteria value (ascending or descending), ties by
 * position (= ticker), a NaN value (unknown market cap, unrated) last in either order. Sorted
 * once per slice, criteria and direction and then shared by every portfolio and every day that
 * uses the slice, so a selection is a walk from the top instead of a sort.
 */
export function rankedPositions(s: RatingSlice, criteria: RatingName | "market_cap", ascending: boolean): Int32Array {
  const id = `${criteria}|${ascending ? "a" : "d"}`;
  let order = s.orders.get(id);
  if (order) return order;
  const key = criteria === "market_cap" ? s.marketCap : s.values[criteria];
  const sign = ascending ? 1 : -1;
  order = Int32Array.from(s.rows.keys()).sort((a, b) => {
    const ka = key[a];
    const kb = key[b];
    const an = Number.isNaN(ka);
    const bn = Number.isNaN(kb);
    if (an !== bn) return an ? 1 : -1;
    if (!an && ka !== kb) return sign * (ka - kb);
    return a - b;
  });
  s.orders.set(id, order);
  return order;
}

/** Index of the first trading date on or after `date` (dates.length when none). */
export const tradingIndexOnOrAfter = (dates: string[], date: string): number => lowerBound(dates, date);
