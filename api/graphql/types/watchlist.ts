// Watchlists with their items (each stock with its latest rating).
import { GraphQLBoolean, GraphQLID, GraphQLInt, GraphQLNonNull, GraphQLObjectType, GraphQLString } from "graphql";
import type { Watchlist } from "../../../pipeline/store/catalog/types.ts";
import { isoTimestamp } from "../../resources/shapes.ts";
import { type WatchlistItem, watchlistItemsPage, watchlistOf } from "../../resources/watchlists.ts";
import type { GqlContext } from "../context.ts";
import { connection, connectionCost, connectionType, pageArgsOf } from "../relay.ts";
import { ratingFields } from "./common.ts";
import { type ListArgs, listArgs, listQuery } from "./portfolio.ts";
import { StockType } from "./stock.ts";

const WatchlistItemNode = new GraphQLObjectType<WatchlistItem, GqlContext>({
  name: "WatchlistItemNode",
  fields: () => ({
    stock: { type: new GraphQLNonNull(StockType), resolve: (i, _a, ctx) => ctx.batch.company(i.stock.ticker) },
    ...ratingFields(),
  }),
});
const WatchlistItemConnection = connectionType("WatchlistItemNode", WatchlistItemNode);

export const WatchlistNode = new GraphQLObjectType<Watchlist, GqlContext>({
  name: "WatchlistNode",
  fields: () => ({
    id: { type: new GraphQLNonNull(GraphQLID) },
    name: { type: new GraphQLNonNull(GraphQLString) },
    description: { type: new GraphQLNonNull(GraphQLString) },
    private: { type: new GraphQLNonNull(GraphQLBoolean) },
    createdAt: { type: new GraphQLNonNull(GraphQLString), resolve: (w) => isoTimestamp(w.createdAt) },
    stockCount: {
      type: new GraphQLNonNull(GraphQLInt),
      description: "Stocks of the watchlist the served snapshot knows",
      resolve: async (w, _a, ctx) => (await watchlistOf(ctx, w)).stockCount,
    },
    items: {
      type: new GraphQLNonNull(WatchlistItemConnection),
      args: listArgs("ticker"),
      extensions: { complexity: connectionCost },
      resolve: (w, args: ListArgs, ctx) =>
        connection(pageArgsOf(args), (p) => watchlistItemsPage(ctx, w, { ...listQuery(args, "ticker"), ...p })),
    },
  }),
});
