// Watchlists (the caller's), one watchlist, and its items with the latest ratings.
// Read from the mutable catalog on every request (no body cache; ETag from the body).
import { z } from "zod";
import type { Watchlist } from "../../pipeline/store/catalog-types.ts";
import { NotFound } from "../errors.ts";
import { objectsPayload } from "../output/payload.ts";
import { comparator, matchesSearch, type Sortable } from "./indexes.ts";
import { limitParam, offsetParam, orderByParam, searchParam } from "./params.ts";
import { WATCHLIST_COLUMNS, WATCHLIST_ITEM_COLUMNS, watchlistItem, watchlistObject, WatchlistItemSchema, WatchlistSchema } from "./resources.ts";
import { defineRoute, page, type RouteContext } from "./route.ts";

/** Own watchlists, and other users' watchlists that are not private; else 404. */
function visible(ctx: Pick<RouteContext<unknown>, "catalog" | "caller" | "path">): Watchlist {
  const id = String(ctx.path.id ?? "");
  const w = ctx.catalog.watchlist(id);
  if (!w || (w.ownerId !== ctx.caller.user.id && w.private)) throw new NotFound(`unknown watchlist ${id}`);
  return w;
}

/** Stocks of a watchlist that the snapshot knows (a delisted ticker drops out of count and items alike). */
function stocksOf(ctx: Pick<RouteContext<unknown>, "snapshot" | "idx">, w: Watchlist): Sortable[] {
  const out: Sortable[] = [];
  for (const t of w.tickers) {
    const company = ctx.snapshot.companyByTicker.get(t.toUpperCase());
    if (company) out.push({ company, ratings: ctx.idx.ratingAsOf(company.ticker) ?? null });
  }
  return out;
}

export const watchlistItemsQuery = z.object({ search: searchParam, order_by: orderByParam("ticker"), limit: limitParam, offset: offsetParam });

export const watchlistsRoutes = [
  defineRoute({
    id: "watchlists_list",
    endpoint: "watchlists",
    path: "/watchlists",
    summary: "The caller's watchlists",
    query: z.object({}),
    response: z.array(WatchlistSchema),
    resolve(ctx) {
      return {
        build: () =>
          objectsPayload(
            ctx.catalog.watchlistsOf(ctx.caller.user.id).map((w) => watchlistObject(w, stocksOf(ctx, w).length)),
            WATCHLIST_COLUMNS,
          ),
      };
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
    resolve(ctx) {
      const w = visible(ctx);
      return { build: () => objectsPayload(watchlistObject(w, stocksOf(ctx, w).length), WATCHLIST_COLUMNS) };
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
    resolve(ctx) {
      const w = visible(ctx);
      const p = ctx.params;
      return {
        build() {
          let list = stocksOf(ctx, w);
          const needle = p.search?.toUpperCase();
          if (needle) list = list.filter((e) => matchesSearch(e.company, needle));
          list.sort(comparator(p.order_by));
          return objectsPayload(page(list, p.offset, p.limit).map((e) => watchlistItem(e.company, e.ratings)), WATCHLIST_ITEM_COLUMNS);
        },
      };
    },
  }),
];
