// Watchlists: the caller's, one (own, or another user's public one), and its items with each
// stock's latest rating. Read from the catalog on every call, so writes show at once.
import type { Watchlist } from "../../pipeline/store/catalog/types.ts";
import { NotFound } from "../errors.ts";
import type { ReadContext } from "./context.ts";
import {
  comparator,
  matchesSearch,
  type OrderBy,
  type Page,
  type PageArgs,
  pageOf,
  type Sortable,
} from "./ordering.ts";
import { watchlistItem, watchlistObject } from "./shapes.ts";
import * as access from "./snapshot-access.ts";

export type WatchlistObject = ReturnType<typeof watchlistObject>;
export type WatchlistItem = ReturnType<typeof watchlistItem>;

/** Own watchlists, and other users' watchlists that are not private; else 404. */
export function visibleWatchlist(ctx: ReadContext, id: string): Watchlist {
  const w = ctx.catalog.watchlist(id);
  if (!w || (w.ownerId !== ctx.caller.user.id && w.private)) throw new NotFound(`unknown watchlist ${id}`);
  return w;
}

/** An own watchlist (writes); another user's, public or not, is "not found". */
export function ownWatchlist(ctx: ReadContext, id: string): Watchlist {
  const w = ctx.catalog.watchlist(id);
  if (!w || w.ownerId !== ctx.caller.user.id) throw new NotFound(`unknown watchlist ${id}`);
  return w;
}

/** Stocks of a watchlist that the snapshot knows (a delisted ticker drops out of count and items alike). */
async function stocksOf(ctx: ReadContext, w: Watchlist): Promise<Sortable[]> {
  const cs = await access.companiesByTicker(ctx.snapshot, w.tickers);
  const known = cs.filter((c) => c !== undefined);
  const ratings = await access.ratingsAsOf(
    ctx.snapshot,
    known.map((c) => c.ticker),
  );
  return known.map((company, i) => ({ company, ratings: ratings[i] ?? null }));
}

export async function watchlistOf(ctx: ReadContext, w: Watchlist): Promise<WatchlistObject> {
  return watchlistObject(w, (await stocksOf(ctx, w)).length);
}

export async function watchlistsOfCaller(ctx: ReadContext): Promise<WatchlistObject[]> {
  return Promise.all(ctx.catalog.watchlistsOf(ctx.caller.user.id).map((w) => watchlistOf(ctx, w)));
}

export interface ItemsQuery extends PageArgs {
  search?: string;
  orderBy: OrderBy;
}

export async function watchlistItemsPage(ctx: ReadContext, w: Watchlist, q: ItemsQuery): Promise<Page<WatchlistItem>> {
  let list = await stocksOf(ctx, w);
  const needle = q.search?.toUpperCase();
  if (needle) list = list.filter((e) => matchesSearch(e.company, needle));
  list.sort(comparator(q.orderBy));
  const page = pageOf(list, q);
  return { items: page.items.map((e) => watchlistItem(e.company, e.ratings)), totalCount: page.totalCount };
}
