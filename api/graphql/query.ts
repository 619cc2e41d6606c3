// The Query root: the interface's operations (stockRatings, watchlistsForUser, profile) with
// their exact names and arguments, plus everything REST reads.
import {
  GraphQLBoolean,
  type GraphQLFieldConfig,
  GraphQLID,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLString,
} from "graphql";
import { RATING_NAMES } from "../../pipeline/types.ts";
import { InvalidParameter } from "../errors.ts";
import { benchmarkList } from "../resources/benchmarks.ts";
import { checkRanges, pageOf, type Ranges } from "../resources/ordering.ts";
import { portfolioList, visiblePortfolio } from "../resources/portfolios.ts";
import { profileOf } from "../resources/profile.ts";
import { evidenceQueryOf, ratingEvidenceRows } from "../resources/rating-evidence.ts";
import { ratingListDate, stockByTicker, stockRatingsPage, stocksPage } from "../resources/stocks.ts";
import { visibleWatchlist } from "../resources/watchlists.ts";
import type { GqlContext } from "./context.ts";
import { COST_PER_MINUTE, costNote, MAX_COST, MAX_RESPONSE_BYTES, TIMEOUT_MS } from "./cost.ts";
import { webhookQueries } from "./mutations/webhooks.ts";
import { DOCUMENT_LIMITS, MAX_TOKENS } from "./prescan.ts";
import { connection, connectionArgs, connectionCost, pageArgsOf } from "./relay.ts";
import { scoped } from "./scopes.ts";
import { DateArg, dateArg, RATING_FIELD_NAMES, RatingRangesInput } from "./types/common.ts";
import { RatingEvidenceNode } from "./types/evidence.ts";
import { BenchmarkNode, ProfileNode } from "./types/misc.ts";
import { type ListArgs, listArgs, listQuery, PortfolioNode, PortfolioNodeConnection } from "./types/portfolio.ts";
import { StockRatingNodeConnection, StockType, StockTypeConnection } from "./types/stock.ts";
import { WatchlistNode } from "./types/watchlist.ts";

const n = (x: number) => x.toLocaleString("en-US");
/** The limits as the schema's reader sees them (api/README.md "GraphQL limits" has the measured basis). */
const LIMITS_DESCRIPTION = [
  "Limits (each refusal names its limit in the error's extensions.code):",
  `a document of at most ${n(MAX_TOKENS)} tokens, ${n(DOCUMENT_LIMITS.fields)} fields,`,
  `${DOCUMENT_LIMITS.aliases} aliases,`,
  `${DOCUMENT_LIMITS.repeatedFields} repeated fields, ${DOCUMENT_LIMITS.fragmentSpreads} fragment spreads and`,
  `${DOCUMENT_LIMITS.directives} directives with fragments expanded, no fragment cycle, depth 12`,
  "(QUERY_TOO_COMPLEX). Cost: scalar fields 0 points, object fields 1 plus their selection,",
  "connections 1 plus first × their selection; the analytics and financials fields say their points.",
  `At most ${n(MAX_COST)} points per request (COST_LIMIT, before anything runs) and`,
  `${n(COST_PER_MINUTE)} per api key per minute (RATE_LIMITED, 429); every answer's extensions.cost`,
  `gives {requested, limit, remaining, resetAt}. Execution at most ${TIMEOUT_MS / 1000} s (TIMEOUT) and an`,
  `answer at most ${MAX_RESPONSE_BYTES / 1024 / 1024} MiB (RESPONSE_TOO_LARGE), both with data null.`,
  "A refusal before execution (QUERY_TOO_COMPLEX, COST_LIMIT) is HTTP 400 under Accept:",
  "application/graphql-response+json and HTTP 200 under Accept: application/json; RATE_LIMITED is 429.",
].join(" ");

/** camelCase input ranges → the readers' snake_case ranges, validated like REST's `ranges`. */
function rangesArg(v: Record<string, number[] | null> | null | undefined): Ranges | undefined {
  if (v == null) return undefined;
  const snake = Object.fromEntries(
    RATING_NAMES.map((n, i) => [n, v[RATING_FIELD_NAMES[i]]]).filter(([, b]) => b != null),
  );
  const r = checkRanges(snake);
  if (typeof r === "string") throw InvalidParameter.one("ranges", r);
  return r;
}

type Fields = Record<string, GraphQLFieldConfig<unknown, GqlContext>>;

/** Stocks and their ratings: all read only the published snapshot. */
const stockQueries = (): Fields => ({
  stockRatings: scoped("stockRatings", {
    type: StockRatingNodeConnection,
    description:
      "Stock ratings as of the latest rating date on or before `date` (the most recent when omitted), ordered by " +
      "`orderBy` (default -total_rating).",
    args: {
      ...listArgs("-total_rating"),
      date: DateArg,
      ranges: { type: RatingRangesInput, description: "Each named rating within [min, max], both inclusive" },
    },
    extensions: { complexity: connectionCost },
    async resolve(_s, args: ListArgs & { date?: string | null; ranges?: Record<string, number[] | null> | null }, ctx) {
      const p = pageArgsOf(args);
      const q = listQuery(args, "-total_rating");
      const ranges = rangesArg(args.ranges);
      const date = await ratingListDate(ctx.snapshot, dateArg(args.date));
      return connection(p, (page) => stockRatingsPage(ctx.snapshot, { date, ...q, ranges, ...page }));
    },
  }),
  stock: {
    type: StockType,
    description:
      "One stock by ticker (case-insensitive); its identity needs no scope, its " +
      "ratings, financials and analytics do.",
    args: { ticker: { type: new GraphQLNonNull(GraphQLString) } },
    resolve: (_s, args: { ticker: string }, ctx) => stockByTicker(ctx.snapshot, args.ticker),
  },
  ratingEvidence: scoped("stockRatings", {
    type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(RatingEvidenceNode))),
    description:
      "What every rating the snapshot serves predicted, and the 12-1 momentum baseline (REST " +
      "/data/v1/rating_evidence): `horizon` 1, 3, 6 or 12 months; `rating` one of them, all when omitted.",
    args: { horizon: { type: new GraphQLNonNull(GraphQLInt), defaultValue: 1 }, rating: { type: GraphQLString } },
    resolve: (_s, args: { horizon: number; rating?: string | null }, ctx) =>
      ratingEvidenceRows(ctx.snapshot, evidenceQueryOf(args.horizon, args.rating)),
  }),
  stocks: {
    type: new GraphQLNonNull(StockTypeConnection),
    description: "Every stock of the served snapshot",
    args: listArgs("ticker"),
    extensions: { complexity: connectionCost },
    resolve: (_s, args: ListArgs, ctx) =>
      connection(pageArgsOf(args), (page) => stocksPage(ctx.snapshot, { ...listQuery(args, "ticker"), ...page })),
  },
});

const portfolioQueries = (): Fields => ({
  portfolios: scoped("portfolios", {
    type: PortfolioNodeConnection,
    description: "private: true (default) the caller's portfolios; false the predefined ones. Ordered by id.",
    args: { ...connectionArgs, private: { type: GraphQLBoolean, defaultValue: true } },
    extensions: { complexity: connectionCost },
    resolve: async (_s, args: { first?: number; after?: string; private: boolean }, ctx) => {
      const p = pageArgsOf(args);
      const list = await portfolioList(ctx, args.private);
      return connection(p, async (page) => pageOf(list, page));
    },
  }),
  portfolio: scoped("portfolios", {
    type: PortfolioNode,
    description: "A predefined portfolio or one of the caller's",
    args: { id: { type: new GraphQLNonNull(GraphQLID) } },
    resolve: (_s, args: { id: string }, ctx) => visiblePortfolio(ctx, args.id),
  }),
});

const watchlistQueries = (): Fields => ({
  watchlistsForUser: scoped("watchlists", {
    type: new GraphQLList(new GraphQLNonNull(WatchlistNode)),
    description: `The caller's watchlists (at most 200 per user), ordered by id. ${costNote("watchlistsForUser")}`,
    resolve: (_s, _a, ctx) => ctx.catalog.watchlistsOf(ctx.caller.user.id),
  }),
  watchlist: scoped("watchlists", {
    type: WatchlistNode,
    description: "One of the caller's watchlists, or another user's that is not private",
    args: { id: { type: new GraphQLNonNull(GraphQLID) } },
    resolve: (_s, args: { id: string }, ctx) => visibleWatchlist(ctx, args.id),
  }),
});

/** The benchmarks and the key's user. */
const otherQueries = (): Fields => ({
  benchmarks: {
    type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(BenchmarkNode))),
    description: "Every benchmark, ordered by id (any valid key)",
    resolve: (_s, _a, ctx) => benchmarkList(ctx.snapshot),
  },
  profile: scoped("profile", {
    type: ProfileNode,
    description: "The key's user",
    resolve: (_s, _a, ctx) => profileOf(ctx),
  }),
});

// Grouped by resource; the order of the spreads is the schema's order of the Query fields.
export const QueryType = new GraphQLObjectType<unknown, GqlContext>({
  name: "Query",
  description: LIMITS_DESCRIPTION,
  fields: () => ({
    ...stockQueries(),
    ...portfolioQueries(),
    ...watchlistQueries(),
    ...otherQueries(),
    ...webhookQueries(),
  }),
});
