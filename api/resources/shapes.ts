// Resource shapes of interface §2 / contract §4 as plain objects: what REST serializes and what
// GraphQL's object types read. Builders only; no lookups.

import type { UserPortfolio, Watchlist } from "../../pipeline/store/catalog/types.ts";
import type { BenchmarkResult, PortfolioResult } from "../../pipeline/store/snapshot/model.ts";
import {
  type Company,
  type PortfolioRules,
  RATING_CAMEL,
  RATING_NAMES,
  type RatingValues,
} from "../../pipeline/types.ts";

export const ratingStr = (v: number | null | undefined): string | null =>
  v == null || !Number.isFinite(v) ? null : v.toFixed(4);
export const marketCapStr = (v: number | null | undefined): string | null =>
  v == null || !Number.isFinite(v) ? null : BigInt(Math.round(v)).toString();

type RatingFields = Record<string, string | null>;
function ratingFields(r: RatingValues | null | undefined): RatingFields {
  const o: RatingFields = {};
  for (const n of RATING_NAMES) o[RATING_CAMEL[n]] = r ? ratingStr(r[n]) : null;
  return o;
}

/** Stock ratings item and portfolio holding: sector and industry as plain names. */
export function ratedStockItem(date: string, c: Company, r: RatingValues | null | undefined) {
  return {
    date,
    stock: {
      id: c.id,
      ticker: c.ticker,
      name: c.name,
      marketCap: marketCapStr(c.marketCap),
      sector: c.sector,
      industry: c.industry,
    },
    ...ratingFields(r),
  };
}
export type RatedStockItem = ReturnType<typeof ratedStockItem>;

/** The item of a (date, company, rating row) built once and reused while the snapshot is served. */
const itemMemo = new WeakMap<object, RatedStockItem>();
const companyOfItem = new WeakMap<RatedStockItem, Company>();
export function ratedStockItemOf(date: string, c: Company, r: RatingValues): RatedStockItem {
  let v = itemMemo.get(r);
  if (!v || v.date !== date) {
    v = ratedStockItem(date, c, r);
    itemMemo.set(r, v);
    companyOfItem.set(v, c);
  }
  return v;
}
/** The company an item was built from (GraphQL's StockType reads it without another lookup). */
export const itemCompany = (item: RatedStockItem): Company | undefined => companyOfItem.get(item);

/** Watchlist item: no date; sector and industry as {id, name}. */
export function watchlistItem(c: Company, r: RatingValues | null | undefined) {
  return {
    stock: {
      id: c.id,
      ticker: c.ticker,
      name: c.name,
      marketCap: marketCapStr(c.marketCap),
      sector: { id: c.sectorId, name: c.sector },
      industry: { id: c.industryId, name: c.industry },
    },
    ...ratingFields(r),
  };
}

/** ISO 8601 timestamp in UTC; a value that does not parse is passed through unchanged. */
export function isoTimestamp(v: string): string {
  const t = Date.parse(v);
  return Number.isFinite(t) ? new Date(t).toISOString() : v;
}

/** Predefined portfolios have no user owner; their owner id is this fixed value. */
export const SYSTEM_OWNER_ID = "system";

/** A decimal fraction as a string with at least two decimals (0.3 → "0.30", 0.125 → "0.125"). */
export function decimalStr(v: number): string {
  const s = String(v);
  const dec = s.includes(".") && !s.includes("e") ? s.split(".")[1].length : 0;
  return v.toFixed(Math.min(10, Math.max(2, dec)));
}

export function portfolioObject(
  rules: PortfolioRules,
  ownerId: string | null,
  createdAt: string,
  result: PortfolioResult | undefined,
) {
  const ranges: Record<string, [number, number]> = {};
  for (const n of RATING_NAMES) {
    const b = rules.ranges?.[n];
    if (b) ranges[RATING_CAMEL[n]] = [b[0], b[1]];
  }
  return {
    id: rules.id,
    owner: { id: ownerId ?? SYSTEM_OWNER_ID },
    name: rules.name,
    description: rules.description,
    private: ownerId !== null,
    createdAt: isoTimestamp(createdAt),
    rebalanceFrequency: rules.rebalanceFrequency,
    maxStocks: rules.maxStocks,
    maxStocksCriteria: rules.maxStocksCriteria,
    maxStocksCriteriaOrder: rules.maxStocksCriteriaOrder,
    ...(rules.maxSectorConcentration != null
      ? { maxSectorConcentration: decimalStr(rules.maxSectorConcentration) }
      : {}),
    ...(rules.costBps ? { costBps: rules.costBps } : {}),
    nextRebalanceDate: result?.nextRebalanceDate ?? null,
    previousRebalanceDate: result?.previousRebalanceDate ?? null,
    ranges,
  };
}
export type PortfolioObject = ReturnType<typeof portfolioObject>;
export const userPortfolioObject = (p: UserPortfolio, result: PortfolioResult | undefined) => {
  const { ownerId, createdAt, ...rules } = p;
  return portfolioObject(rules, ownerId, createdAt, result);
};

export const watchlistObject = (w: Watchlist, stockCount: number) => ({
  id: w.id,
  name: w.name,
  description: w.description,
  private: w.private,
  createdAt: isoTimestamp(w.createdAt),
  stockCount,
});

export const benchmarkObject = (b: BenchmarkResult) => ({
  id: b.id,
  name: b.name,
  description: b.description,
  rebalanceFrequency: b.rebalanceFrequency,
});
