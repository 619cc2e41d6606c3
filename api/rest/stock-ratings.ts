// GET /stock_ratings (list: search, order_by, date, ranges, limit, offset) and
// GET /stock_ratings/:ticker (date). Thin wrappers over resources/stocks.ts; list items are
// serialized once per snapshot and reused.
import { z } from "zod";
import { objectsPayload, preserializedList } from "../output/payload.ts";
import { ratingListDate, stockRating, stockRatingsPage } from "../resources/stocks.ts";
import { dateParam, limitParam, offsetParam, orderByParam, rangesParam, searchParam } from "./params.ts";
import { RATED_ITEM_COLUMNS, StockRatingSchema } from "./resources.ts";
import { defineRoute, jsonOf, pageArgs, tickerOf } from "./route.ts";

export const stockRatingsListQuery = z.object({
  search: searchParam,
  order_by: orderByParam("-total_rating"),
  date: dateParam,
  ranges: rangesParam,
  limit: limitParam,
  offset: offsetParam,
});

export const stockRatingsOneQuery = z.object({ date: dateParam });

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
    response: StockRatingSchema,
    async resolve({ snapshot, params, path }) {
      const ticker = tickerOf({ path });
      const item = await stockRating(snapshot, ticker, params.date);
      return { key: JSON.stringify([ticker, item.date]), build: () => objectsPayload(item, RATED_ITEM_COLUMNS) };
    },
  }),
];
