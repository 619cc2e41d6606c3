// GET /stock_ratings (list: search, order_by, date, ranges, limit, offset) and
// GET /stock_ratings/:ticker (date). Thin wrappers over resources/stocks.ts; list items are
// serialized once per snapshot and reused.
import { z } from "zod";
import { objectsPayload, preserializedList } from "../output/payload.ts";
import { ratingComponents } from "../resources/snapshot-access.ts";
import { ratingListDate, stockRating, stockRatingsPage } from "../resources/stocks.ts";
import { dateParam, limitParam, offsetParam, orderByParam, rangesParam, searchParam } from "./params.ts";
import { RATED_ITEM_COLUMNS, RatingComponentSchema, StockRatingSchema } from "./resources.ts";
import { defineRoute, jsonOf, pageArgs, tickerOf } from "./route.ts";

export const stockRatingsListQuery = z.object({
  search: searchParam,
  order_by: orderByParam("-total_rating"),
  date: dateParam,
  ranges: rangesParam,
  limit: limitParam,
  offset: offsetParam,
});

export const includeParam = z
  .enum(["components"], { error: 'must be "components"' })
  .optional()
  .meta({
    description:
      "components: add the rating's components (every factor of the model: raw value, 0..10 score, the statement " +
      "it came from; an empty list for vendor ratings). JSON: a `components` array on the object; CSV and Arrow: " +
      "one row per component instead of the rating (docs/ratings.md)",
  });

export const stockRatingsOneQuery = z.object({ date: dateParam, include: includeParam });

/** The CSV and Arrow columns of a rating's components (one row each). */
export const COMPONENT_COLUMNS = ["date", "ticker", "rating", "factor", "raw", "score", "fiscalYear", "publishDate"];

export const stockRatingsRoutes = [
  defineRoute({
    id: "stock_ratings_list",
    endpoint: "stock_ratings",
    path: "/stock_ratings",
    summary: "Stock ratings, list",
    query: stockRatingsListQuery,
    response: z.array(StockRatingSchema),
    async resolve({ snapshot, params }) {
      const date = await ratingListDate(snapshot, params.date);
      return {
        key: JSON.stringify([
          date,
          params.search ?? "",
          params.order_by,
          params.ranges ?? null,
          params.limit,
          params.offset,
        ]),
        async build() {
          const page = await stockRatingsPage(snapshot, {
            date,
            orderBy: params.order_by,
            search: params.search,
            ranges: params.ranges,
            ...pageArgs(params),
          });
          return { ...preserializedList(page.items.map(jsonOf), RATED_ITEM_COLUMNS), total: await page.totalCount() };
        },
      };
    },
  }),
  defineRoute({
    id: "stock_ratings_one",
    endpoint: "stock_ratings",
    path: "/stock_ratings/:ticker",
    summary: "Stock ratings, one ticker (as of `date`)",
    pathParams: { ticker: "Ticker (case-insensitive)" },
    query: stockRatingsOneQuery,
    response: StockRatingSchema.extend({ components: z.array(RatingComponentSchema).optional() }),
    async resolve({ snapshot, params, path }) {
      const ticker = tickerOf({ path });
      const item = await stockRating(snapshot, ticker, params.date);
      if (!params.include)
        return { key: JSON.stringify([ticker, item.date]), build: () => objectsPayload(item, RATED_ITEM_COLUMNS) };
      return {
        key: JSON.stringify([ticker, item.date, params.include]),
        async build() {
          const components = await ratingComponents(snapshot, item.stock.ticker, item.date);
          const rows = components.map((c) => ({ date: item.date, ticker: item.stock.ticker, ...c }));
          const json = objectsPayload({ ...item, components });
          return { ...objectsPayload(rows, COMPONENT_COLUMNS), json: json.json };
        },
      };
    },
  }),
];
