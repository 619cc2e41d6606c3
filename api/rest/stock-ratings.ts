// GET /stock_ratings (list: search, order_by, date, ranges, limit, offset) and
// GET /stock_ratings/:ticker (date). Served from per-date pre-serialized items and sorted orders.
import { z } from "zod";
import { NotFound } from "../errors.ts";
import { preserializedList, objectsPayload } from "../output/payload.ts";
import { inRanges, type RatedEntry } from "./indexes.ts";
import { dateParam, limitParam, offsetParam, orderByParam, rangesParam, searchParam } from "./params.ts";
import { RATED_ITEM_COLUMNS, ratedStockItem, StockRatingSchema } from "./resources.ts";
import { defineRoute, page, tickerOf } from "./route.ts";

export const stockRatingsListQuery = z.object({
  search: searchParam,
  order_by: orderByParam("-total_rating"),
  date: dateParam,
  ranges: rangesParam,
  limit: limitParam,
  offset: offsetParam,
});

export const stockRatingsOneQuery = z.object({ date: dateParam });

const beforeFirst = (date: string | undefined) =>
  new NotFound(date ? `no ratings on or before ${date}` : "no ratings have been published");

export const stockRatingsRoutes = [
  defineRoute({
    id: "stock_ratings_list",
    endpoint: "stock_ratings",
    path: "/stock_ratings",
    summary: "Stock ratings, list",
    query: stockRatingsListQuery,
    response: z.array(StockRatingSchema),
    resolve({ idx, snapshot, params }) {
      const di = idx.ratingDateIndex(params.date);
      if (di < 0) throw beforeFirst(params.date);
      const date = snapshot.ratingDates[di];
      return {
        key: JSON.stringify([date, params.search ?? "", params.order_by, params.ranges ?? null, params.limit, params.offset]),
        build() {
          let list: RatedEntry[] = idx.sorted(date, params.order_by);
          const needle = params.search?.toUpperCase();
          const ranges = params.ranges;
          if (needle || (ranges && Object.keys(ranges).length)) {
            const out: RatedEntry[] = [];
            // filtering is lazy: stop once the page is full
            const want = params.offset + params.limit;
            for (const e of list) {
              if (needle && !e.haystack.includes(needle)) continue;
              if (ranges && !inRanges(e.ratings, ranges)) continue;
              out.push(e);
              if (out.length >= want) break;
            }
            list = out;
          }
          return preserializedList(page(list, params.offset, params.limit), RATED_ITEM_COLUMNS);
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
    resolve({ idx, snapshot, params, path }) {
      const ticker = tickerOf({ path });
      const company = snapshot.companyByTicker.get(ticker);
      if (!company) throw new NotFound(`unknown ticker ${ticker}`);
      const row = idx.ratingAsOf(ticker, params.date);
      if (!row) throw new NotFound(params.date ? `no ratings of ${ticker} on or before ${params.date}` : `no ratings of ${ticker}`);
      return {
        key: JSON.stringify([ticker, row.date]),
        build: () => objectsPayload(ratedStockItem(row.date, company, row), RATED_ITEM_COLUMNS),
      };
    },
  }),
];
