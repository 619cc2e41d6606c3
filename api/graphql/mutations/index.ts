// The Mutation root: watchlists and their stocks, the caller's portfolios, the profile.
import {
  GraphQLBoolean,
  type GraphQLFieldConfig,
  GraphQLFloat,
  GraphQLID,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLString,
} from "graphql";
import type { UserPortfolio, Watchlist } from "../../../pipeline/store/catalog/types.ts";
import {
  createPortfolio,
  deletePortfolio,
  type PortfolioInput,
  updatePortfolio,
} from "../../resources/portfolio-writes.ts";
import { visiblePortfolio } from "../../resources/portfolios.ts";
import { profileOf } from "../../resources/profile.ts";
import { updateProfile } from "../../resources/profile-writes.ts";
import {
  addToWatchlist,
  createWatchlist,
  deleteWatchlist,
  removeFromWatchlist,
  type StockRefs,
  updateWatchlist,
} from "../../resources/watchlist-writes.ts";
import type { GqlContext } from "../context.ts";
import { RatingRangesInput } from "../types/common.ts";
import { ProfileNode } from "../types/misc.ts";
import { PortfolioNode } from "../types/portfolio.ts";
import { WatchlistNode } from "../types/watchlist.ts";
import { mutation } from "./payload.ts";
import { webhookMutations } from "./webhooks.ts";

// [String] as the interface writes it (a client may declare `$t: [String]`); null entries are unknown stocks
const strings = () => new GraphQLList(GraphQLString);
const ID = () => new GraphQLNonNull(GraphQLID);
const stockRefs = { stockTickers: { type: strings() }, stockIds: { type: strings() } };
const watchlistOut = { watchlist: { type: WatchlistNode, value: (w: Watchlist) => w } };
const portfolioOut = {
  portfolio: { type: PortfolioNode, value: (p: UserPortfolio, ctx: GqlContext) => visiblePortfolio(ctx, p.id) },
};
const ruleInput = (required: boolean) => ({
  name: { type: required ? new GraphQLNonNull(GraphQLString) : GraphQLString },
  description: { type: GraphQLString },
  rebalanceFrequency: {
    type: required ? new GraphQLNonNull(GraphQLInt) : GraphQLInt,
    description: "Months between rebalances",
  },
  maxStocks: { type: required ? new GraphQLNonNull(GraphQLInt) : GraphQLInt },
  maxStocksCriteria: {
    type: GraphQLString,
    description: "A snake_case rating name or market_cap; default total_rating",
  },
  maxStocksCriteriaOrder: { type: GraphQLString, description: "descending (default) or ascending" },
  maxSectorConcentration: { type: GraphQLFloat, description: "Fraction in (0, 1]; null for no cap" },
  ranges: { type: RatingRangesInput },
  costBps: {
    type: GraphQLFloat,
    description: "Trading cost in basis points of the traded value at each rebalance, 0 to 500; default 0",
  },
});

type Fields = Record<string, GraphQLFieldConfig<unknown, GqlContext>>;

/** A watchlist's stocks. */
const watchlistStockMutations = (): Fields => ({
  addToWatchlist: mutation<{ watchlistId: string } & StockRefs, Watchlist>({
    name: "addToWatchlist",
    description:
      "Adds stocks to one of the caller's watchlists: all or nothing; a stock already present is not repeated.",
    scopes: "watchlistsWrite",
    input: { watchlistId: { type: ID() }, ...stockRefs },
    outputs: watchlistOut,
    run: addToWatchlist,
  }),
  removeFromWatchlist: mutation<{ watchlistId: string } & StockRefs, Watchlist>({
    name: "removeFromWatchlist",
    description: "Removes stocks from one of the caller's watchlists: all or nothing (each must be in it).",
    scopes: "watchlistsWrite",
    input: { watchlistId: { type: ID() }, ...stockRefs },
    outputs: watchlistOut,
    run: removeFromWatchlist,
  }),
});

/** Watchlists themselves. */
const watchlistMutations = (): Fields => ({
  createWatchlist: mutation<{ name: string; description?: string; private?: boolean } & StockRefs, Watchlist>({
    name: "createWatchlist",
    description:
      "Creates a watchlist of the caller (private unless private: false), optionally with stocks (all or nothing).",
    scopes: "watchlistsWrite",
    input: {
      name: { type: new GraphQLNonNull(GraphQLString) },
      description: { type: GraphQLString },
      private: { type: GraphQLBoolean },
      ...stockRefs,
    },
    outputs: watchlistOut,
    run: createWatchlist,
  }),
  updateWatchlist: mutation<{ watchlistId: string; name?: string; description?: string; private?: boolean }, Watchlist>(
    {
      name: "updateWatchlist",
      description: "Changes the given fields of one of the caller's watchlists.",
      scopes: "watchlistsWrite",
      input: {
        watchlistId: { type: ID() },
        name: { type: GraphQLString },
        description: { type: GraphQLString },
        private: { type: GraphQLBoolean },
      },
      outputs: watchlistOut,
      run: updateWatchlist,
    },
  ),
  deleteWatchlist: mutation<{ watchlistId: string }, string>({
    name: "deleteWatchlist",
    description: "Deletes one of the caller's watchlists.",
    scopes: "watchlistsWrite",
    input: { watchlistId: { type: ID() } },
    outputs: { deletedWatchlistId: { type: GraphQLID, value: (id: string) => id } },
    run: deleteWatchlist,
  }),
});

const portfolioMutations = (): Fields => ({
  createPortfolio: mutation<PortfolioInput, UserPortfolio>({
    name: "createPortfolio",
    description:
      "Creates a portfolio of the caller, validated like portfolios.json; it reads PENDING " +
      "until its backtest is published.",
    scopes: "portfoliosWrite",
    input: ruleInput(true),
    outputs: portfolioOut,
    run: createPortfolio,
  }),
  updatePortfolio: mutation<PortfolioInput & { portfolioId: string }, UserPortfolio>({
    name: "updatePortfolio",
    description:
      "Changes the given rule fields (ranges as a whole) of one of the caller's portfolios; it " +
      "reads PENDING until rebalanced.",
    scopes: "portfoliosWrite",
    input: { portfolioId: { type: ID() }, ...ruleInput(false) },
    outputs: portfolioOut,
    run: updatePortfolio,
  }),
  deletePortfolio: mutation<{ portfolioId: string }, string>({
    name: "deletePortfolio",
    description: "Deletes one of the caller's portfolios.",
    scopes: "portfoliosWrite",
    input: { portfolioId: { type: ID() } },
    outputs: { deletedPortfolioId: { type: GraphQLID, value: (id: string) => id } },
    run: deletePortfolio,
  }),
});

const profileMutations = (): Fields => ({
  updateProfile: mutation<Record<"email" | "firstName" | "lastName" | "phoneNumber", string | null>, unknown>({
    name: "updateProfile",
    description: "Changes the given fields of the caller's profile.",
    scopes: "profile",
    input: {
      email: { type: GraphQLString },
      firstName: { type: GraphQLString },
      lastName: { type: GraphQLString },
      phoneNumber: { type: GraphQLString },
    },
    outputs: { profile: { type: ProfileNode, value: (_u: unknown, ctx: GqlContext) => profileOf(ctx) } },
    run: updateProfile,
  }),
});

// Grouped by resource; the order of the spreads is the schema's order of the Mutation fields.
export const MutationType = new GraphQLObjectType<unknown, GqlContext>({
  name: "Mutation",
  fields: () => ({
    ...watchlistStockMutations(),
    ...watchlistMutations(),
    ...portfolioMutations(),
    ...profileMutations(),
    ...webhookMutations(),
  }),
});
