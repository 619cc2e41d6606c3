// Watchlists (the caller's), one watchlist, and its items with the latest ratings. Thin wrappers
// over resources/watchlists.ts; catalog-backed, so no body cache (ETag from the body).
import { z } from "zod";
import { objectsPayload } from "../output/payload.ts";
import { visibleWatchlist, watchlistItemsPage, watchlistOf, watchlistsOfCaller } from "../resources/watchlists.ts";
import { limitParam, offsetParam, orderByParam, searchParam } from "./params.ts";
import { WATCHLIST_COLUMNS, WATCHLIST_ITEM_COLUMNS, WatchlistItemSchema, WatchlistSchema } from "./resources.ts";
import { defineRoute, pageArgs } from "./route.ts";

const idOf = (ctx: { path: Record<string, string> }) => String(ctx.path.id ?? "");

export const watchlistItemsQuery = z.object({
  search: searchParam,
  order_by: orderByParam("ticker"),
  limit: limitParam,
  offset: offsetParam,
});

export const watchlistsRoutes = [
  defineRoute({
    id: "watchlists_list",
    endpoint: "watchlists",
    path: "/watchlists",
    summary: "The caller's watchlists",
    query: z.object({}),
    response: z.array(WatchlistSchema),
    async resolve(ctx) {
      return { build: async () => objectsPayload(await watchlistsOfCaller(ctx), WATCHLIST_COLUMNS) };
    },
  }),
  defineRoute({
    id: "watchlist_one",
    endpoint: "watchlists",
    path: "/watchlists/:id",
    summary: "Watchlist, one",
    pathParams: { id: "Watchlist id" },
    query: z.object({}),
    response: WatchlistSchema,
    async resolve(ctx) {
      const w = visibleWatchlist(ctx, idOf(ctx));
      return { build: async () => objectsPayload(await watchlistOf(ctx, w), WATCHLIST_COLUMNS) };
    },
  }),
  defineRoute({
    id: "watchlist_items",
    endpoint: "watchlist_items",
    path: "/watchlist_items/:id",
    summary: "Stocks of a watchlist with their latest ratings",
    pathParams: { id: "Watchlist id" },
    query: watchlistItemsQuery,
    response: z.array(WatchlistItemSchema),
    async resolve(ctx) {
      const w = visibleWatchlist(ctx, idOf(ctx));
      const p = ctx.params;
      return {
        async build() {
          const page = await watchlistItemsPage(ctx, w, { search: p.search, orderBy: p.order_by, ...pageArgs(p) });
          return { ...objectsPayload(page.items, WATCHLIST_ITEM_COLUMNS), total: await page.totalCount() };
        },
      };
    },
  }),
];
