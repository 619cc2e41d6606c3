// Resource shapes of interface §2 / contract §4: builders (used per request or once per snapshot)
// and their zod schemas (used only to document responses in the OpenAPI document).
import { z } from "zod";
import type { PortfolioResult, BenchmarkResult } from "../../pipeline/store/model.ts";
import type { UserPortfolio, Watchlist } from "../../pipeline/store/catalog-types.ts";
import { RATING_CAMEL, RATING_NAMES, type Company, type PortfolioRules, type RatingValues } from "../../pipeline/types.ts";

export const ratingStr = (v: number | null | undefined): string | null => (v == null || !Number.isFinite(v) ? null : v.toFixed(4));
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
    stock: { id: c.id, ticker: c.ticker, name: c.name, marketCap: marketCapStr(c.marketCap), sector: c.sector, industry: c.industry },
    ...ratingFields(r),
  };
}

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

const RATING_COLS = RATING_NAMES.map((n) => RATING_CAMEL[n]);
export const RATED_ITEM_COLUMNS = ["date", "stock.id", "stock.ticker", "stock.name", "stock.marketCap", "stock.sector", "stock.industry", ...RATING_COLS];
export const WATCHLIST_ITEM_COLUMNS = [
  "stock.id", "stock.ticker", "stock.name", "stock.marketCap",
  "stock.sector.id", "stock.sector.name", "stock.industry.id", "stock.industry.name", ...RATING_COLS,
];

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

export function portfolioObject(rules: PortfolioRules, ownerId: string | null, createdAt: string, result: PortfolioResult | undefined) {
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
    ...(rules.maxSectorConcentration != null ? { maxSectorConcentration: decimalStr(rules.maxSectorConcentration) } : {}),
    nextRebalanceDate: result?.nextRebalanceDate ?? null,
    previousRebalanceDate: result?.previousRebalanceDate ?? null,
    ranges,
  };
}
export const userPortfolioObject = (p: UserPortfolio, result: PortfolioResult | undefined) => {
  const { ownerId, createdAt, ...rules } = p;
  return portfolioObject(rules, ownerId, createdAt, result);
};
export const PORTFOLIO_COLUMNS = [
  "id", "owner.id", "name", "description", "private", "createdAt", "rebalanceFrequency", "maxStocks",
  "maxStocksCriteria", "maxStocksCriteriaOrder", "maxSectorConcentration", "nextRebalanceDate", "previousRebalanceDate",
  ...RATING_COLS.map((c) => `ranges.${c}`),
];

export const watchlistObject = (w: Watchlist, stockCount: number) => ({
  id: w.id,
  name: w.name,
  description: w.description,
  private: w.private,
  createdAt: isoTimestamp(w.createdAt),
  stockCount,
});
export const WATCHLIST_COLUMNS = ["id", "name", "description", "private", "createdAt", "stockCount"];

export const benchmarkObject = (b: BenchmarkResult) => ({ id: b.id, name: b.name, description: b.description, rebalanceFrequency: b.rebalanceFrequency });
export const BENCHMARK_COLUMNS = ["id", "name", "description", "rebalanceFrequency"];
export const TRADE_COLUMNS = ["date", "id", "ticker", "name", "price", "quantity", "value", "pct", "order_type"];

// ---- response schemas (documentation only)
const decimal4 = z.string().regex(/^\d+\.\d{4}$/).nullable().meta({ description: "Rating 0..10, four decimals" });
const ratingSchemas = Object.fromEntries(RATING_COLS.map((c) => [c, decimal4])) as Record<string, typeof decimal4>;
const date = z.string().meta({ format: "date" });
const timestamp = z.string().meta({ format: "date-time" });
const marketCap = z.string().regex(/^\d+$/).nullable().meta({ description: "USD, integer digits" });

export const StockRatingSchema = z
  .object({
    date,
    stock: z.object({ id: z.string(), ticker: z.string(), name: z.string(), marketCap, sector: z.string(), industry: z.string() }),
    ...ratingSchemas,
  })
  .meta({ id: "StockRating" });
export const HoldingSchema = StockRatingSchema.meta({ id: "PortfolioHolding" });
const named = z.object({ id: z.number().int(), name: z.string() });
export const WatchlistItemSchema = z
  .object({
    stock: z.object({ id: z.string(), ticker: z.string(), name: z.string(), marketCap, sector: named, industry: named }),
    ...ratingSchemas,
  })
  .meta({ id: "WatchlistItem" });
export const PortfolioSchema = z
  .object({
    id: z.string(),
    owner: z.object({ id: z.string() }),
    name: z.string(),
    description: z.string(),
    private: z.boolean(),
    createdAt: timestamp,
    rebalanceFrequency: z.number().int().meta({ description: "Months" }),
    maxStocks: z.number().int(),
    maxStocksCriteria: z.string(),
    maxStocksCriteriaOrder: z.enum(["descending", "ascending"]),
    maxSectorConcentration: z.string().optional().meta({ description: "Decimal fraction; only when set" }),
    nextRebalanceDate: date.nullable(),
    previousRebalanceDate: date.nullable(),
    ranges: z.record(z.string(), z.tuple([z.number(), z.number()])).meta({ description: "camelCase rating name → [min, max]" }),
  })
  .meta({ id: "Portfolio" });
export const WatchlistSchema = z
  .object({ id: z.string(), name: z.string(), description: z.string(), private: z.boolean(), createdAt: timestamp, stockCount: z.number().int() })
  .meta({ id: "Watchlist" });
export const BenchmarkSchema = z
  .object({ id: z.string(), name: z.string(), description: z.string(), rebalanceFrequency: z.number().int() })
  .meta({ id: "Benchmark" });
export const TradeSchema = z
  .object({
    date,
    id: z.number().int(),
    ticker: z.string(),
    name: z.string(),
    price: z.number(),
    quantity: z.number(),
    value: z.number(),
    pct: z.number(),
    order_type: z.literal("Buy"),
  })
  .meta({ id: "PortfolioTrade" });
export const MetricRowSchema = z
  .object({ metric: z.string() })
  .catchall(z.string())
  .meta({ id: "MetricRow", description: "{metric, <ticker or Portfolio>: value, [<benchmark name>: value]}" });
export const SeriesSchema = z
  .object({
    name: z.string(),
    data: z.array(z.record(z.string(), z.union([z.number(), z.string()]))),
    window: z.number().int().optional(),
    bins: z.array(z.object({ start: z.number(), end: z.number(), count: z.number().int() })).optional(),
  })
  .meta({ id: "Series" });
export const FinancialsSchema = z
  .object({ id: z.string(), ticker: z.string(), name: z.string() })
  .catchall(z.array(z.record(z.string(), z.union([z.string(), z.number(), z.null()]))))
  .meta({ id: "StockFinancials", description: "stock{Income,Balance,CashFlow,Derived}{Annual,Quarterly,Ttm}Data arrays" });
export const ErrorSchema = z
  .object({
    error: z.object({
      status: z.number().int(),
      code: z.string(),
      message: z.string(),
      details: z.array(z.object({ param: z.string(), message: z.string() })),
    }),
  })
  .meta({ id: "Error" });
