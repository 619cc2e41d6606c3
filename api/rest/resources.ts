// REST views of the resource shapes (resources/shapes.ts builds them): CSV columns, and zod
// schemas used only to document responses in the OpenAPI document.
import { z } from "zod";
import { RATING_CAMEL, RATING_NAMES } from "../../pipeline/types.ts";

const RATING_COLS = RATING_NAMES.map((n) => RATING_CAMEL[n]);
export const RATED_ITEM_COLUMNS = [
  "date",
  "stock.id",
  "stock.ticker",
  "stock.name",
  "stock.marketCap",
  "stock.sector",
  "stock.industry",
  ...RATING_COLS,
];
export const WATCHLIST_ITEM_COLUMNS = [
  "stock.id",
  "stock.ticker",
  "stock.name",
  "stock.marketCap",
  "stock.sector.id",
  "stock.sector.name",
  "stock.industry.id",
  "stock.industry.name",
  ...RATING_COLS,
];

export const PORTFOLIO_COLUMNS = [
  "id",
  "owner.id",
  "name",
  "description",
  "private",
  "createdAt",
  "rebalanceFrequency",
  "maxStocks",
  "maxStocksCriteria",
  "maxStocksCriteriaOrder",
  "maxSectorConcentration",
  "nextRebalanceDate",
  "previousRebalanceDate",
  ...RATING_COLS.map((c) => `ranges.${c}`),
];

export const WATCHLIST_COLUMNS = ["id", "name", "description", "private", "createdAt", "stockCount"];

export const BENCHMARK_COLUMNS = ["id", "name", "description", "rebalanceFrequency"];
export const TRADE_COLUMNS = ["date", "id", "ticker", "name", "price", "quantity", "value", "pct", "order_type"];

// ---- response schemas (documentation only)
const decimal4 = z
  .string()
  .regex(/^\d+\.\d{4}$/)
  .nullable()
  .meta({ description: "Rating 0..10, four decimals" });
const ratingSchemas = Object.fromEntries(RATING_COLS.map((c) => [c, decimal4])) as Record<string, typeof decimal4>;
const date = z.string().meta({ format: "date" });
const timestamp = z.string().meta({ format: "date-time" });
const marketCap = z.string().regex(/^\d+$/).nullable().meta({ description: "USD, integer digits" });

export const StockRatingSchema = z
  .object({
    date,
    stock: z.object({
      id: z.string(),
      ticker: z.string(),
      name: z.string(),
      marketCap,
      sector: z.string(),
      industry: z.string(),
    }),
    ...ratingSchemas,
  })
  .meta({ id: "StockRating" });
/** One factor of a computed rating (pipeline/ratings/components.ts); null: no input for it. */
export const RatingComponentSchema = z
  .object({
    rating: z.string().meta({ description: "The rating the factor feeds (snake_case)" }),
    factor: z.string().meta({ description: "The factor (docs/ratings.md)" }),
    raw: z.number().nullable().meta({ description: "Its raw value on the rating date" }),
    score: z.number().nullable().meta({ description: "Its 0..10 score within the date's cross-section" }),
    fiscalYear: z.number().int().nullable().meta({ description: "The statement it came from (statement factors)" }),
    publishDate: z.string().nullable().meta({ description: "That statement's Publish Date (YYYY-MM-DD)" }),
  })
  .meta({ id: "RatingComponent" });

export const HoldingSchema = StockRatingSchema.meta({ id: "PortfolioHolding" });
const named = z.object({ id: z.number().int(), name: z.string() });
export const WatchlistItemSchema = z
  .object({
    stock: z.object({
      id: z.string(),
      ticker: z.string(),
      name: z.string(),
      marketCap,
      sector: named,
      industry: named,
    }),
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
    costBps: z.number().optional().meta({ description: "Trading cost in basis points; only when set (not 0)" }),
    nextRebalanceDate: date.nullable(),
    previousRebalanceDate: date.nullable(),
    ranges: z
      .record(z.string(), z.tuple([z.number(), z.number()]))
      .meta({ description: "camelCase rating name → [min, max]" }),
  })
  .meta({ id: "Portfolio" });
export const WatchlistSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    private: z.boolean(),
    createdAt: timestamp,
    stockCount: z.number().int(),
  })
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
  .meta({
    id: "StockFinancials",
    description: "stock{Income,Balance,CashFlow,Derived}{Annual,Quarterly,Ttm}Data arrays",
  });
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
