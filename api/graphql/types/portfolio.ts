// Portfolios: the Portfolio resource's fields, its rebalance status (PENDING until the served
// snapshot holds its backtest for the current rules), holdings, trades, rebalance history, metrics and
// performance.
import {
  GraphQLBoolean,
  GraphQLEnumType,
  type GraphQLFieldConfigMap,
  GraphQLFloat,
  GraphQLID,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLString,
} from "graphql";
import { InvalidParameter } from "../../errors.ts";
import { comparedPortfolios } from "../../resources/compare.ts";
import { isOrderBy, type OrderBy } from "../../resources/ordering.ts";
import {
  holdingsPage,
  portfolioSubject,
  rebalanceStatus,
  tradesOf,
  type VisiblePortfolio,
} from "../../resources/portfolios.ts";
import { rebalancesPage } from "../../resources/rebalances.ts";
import type { GqlContext } from "../context.ts";
import { connection, connectionArgs, connectionCost, connectionType, pageArgsOf } from "../relay.ts";
import { scoped } from "../scopes.ts";
import { metricsField, performanceField } from "./analytics.ts";
import { RatingRanges } from "./common.ts";
import { StockRatingNodeConnection } from "./stock.ts";

export function orderByArg(v: string | null | undefined, def: OrderBy): OrderBy {
  if (v == null) return def;
  if (!isOrderBy(v))
    throw InvalidParameter.one(
      "orderBy",
      "must be ticker, name, market_cap or a snake_case rating name, optionally prefixed with -",
    );
  return v;
}
const searchArg = (v: string | null | undefined) => {
  if (v != null && v.length > 200) throw InvalidParameter.one("search", "must be at most 200 characters");
  return v || undefined;
};
export const listArgs = (def: OrderBy) => ({
  ...connectionArgs,
  search: {
    type: GraphQLString,
    description: "Keeps stocks whose ticker or name contains the string (case-insensitive)",
  },
  orderBy: {
    type: GraphQLString,
    defaultValue: def,
    description: "ticker, name, market_cap or a snake_case rating name; a leading - means descending",
  },
});
export type ListArgs = { first?: number; after?: string; search?: string | null; orderBy?: string | null };
export const listQuery = (a: ListArgs, def: OrderBy) => ({
  search: searchArg(a.search),
  orderBy: orderByArg(a.orderBy, def),
});

const PortfolioStatusEnum = new GraphQLEnumType({
  name: "PortfolioStatus",
  values: {
    PENDING: { description: "A change asked for a rebalance that the served snapshot does not hold yet" },
    READY: { description: "The served snapshot holds this portfolio's backtest for its current rules" },
    FAILED: {
      description:
        "The rebalance its latest change asked for failed on the server; the next change or " +
        "pipeline run computes it again",
    },
  },
});
const Owner = new GraphQLObjectType({
  name: "PortfolioOwner",
  fields: { id: { type: new GraphQLNonNull(GraphQLString) } },
});

const TradeType = new GraphQLObjectType({
  name: "PortfolioTrade",
  fields: {
    date: { type: new GraphQLNonNull(GraphQLString) },
    id: { type: GraphQLInt, description: "Stock id" },
    ticker: { type: new GraphQLNonNull(GraphQLString) },
    name: { type: new GraphQLNonNull(GraphQLString) },
    price: { type: new GraphQLNonNull(GraphQLFloat) },
    quantity: { type: new GraphQLNonNull(GraphQLFloat) },
    value: { type: new GraphQLNonNull(GraphQLFloat), description: "USD" },
    pct: { type: new GraphQLNonNull(GraphQLFloat) },
    orderType: { type: new GraphQLNonNull(GraphQLString), resolve: (t: { order_type: string }) => t.order_type },
  },
});
const TradeConnection = connectionType("PortfolioTrade", TradeType);
const RebalancePeriodEnum = new GraphQLEnumType({
  name: "RebalancePeriod",
  values: { LAST_REBALANCE_DATE: { value: "last_rebalance_date" }, TODAY: { value: "today" } },
});

const RebalanceType = new GraphQLObjectType({
  name: "PortfolioRebalance",
  description: "One rebalance of the backtest (an extension beyond the interface)",
  fields: {
    date: { type: new GraphQLNonNull(GraphQLString) },
    holdingsCount: { type: new GraphQLNonNull(GraphQLInt), description: "Stocks held from this rebalance on" },
    added: {
      type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(GraphQLString))),
      description: "Tickers held now and not at the rebalance before (all at the first), sorted",
    },
    removed: {
      type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(GraphQLString))),
      description: "Tickers held at the rebalance before and not now, sorted",
    },
    turnover: {
      type: GraphQLFloat,
      description: "Σ|target value − value before trading| over the stocks / portfolio value before costs",
    },
    cost: {
      type: GraphQLFloat,
      description: "costBps / 10,000 × turnover: the fraction of the portfolio's value the trading cost",
    },
  },
});
const RebalanceConnection = connectionType("PortfolioRebalance", RebalanceType);

type Fields = GraphQLFieldConfigMap<VisiblePortfolio, GqlContext>;
const obj = (v: VisiblePortfolio) => v.object as Record<string, unknown>;

/** The Portfolio resource's own fields (interface §4.2). */
const resourceFields = (): Fields => ({
  id: { type: new GraphQLNonNull(GraphQLID), resolve: (v) => v.id },
  owner: { type: new GraphQLNonNull(Owner), resolve: (v) => v.object.owner },
  name: { type: new GraphQLNonNull(GraphQLString), resolve: (v) => v.object.name },
  description: { type: new GraphQLNonNull(GraphQLString), resolve: (v) => v.object.description },
  private: { type: new GraphQLNonNull(GraphQLBoolean), resolve: (v) => v.object.private },
  createdAt: { type: new GraphQLNonNull(GraphQLString), resolve: (v) => v.object.createdAt },
  rebalanceFrequency: {
    type: new GraphQLNonNull(GraphQLInt),
    description: "Months",
    resolve: (v) => v.object.rebalanceFrequency,
  },
  maxStocks: { type: new GraphQLNonNull(GraphQLInt), resolve: (v) => v.object.maxStocks },
  maxStocksCriteria: { type: new GraphQLNonNull(GraphQLString), resolve: (v) => v.object.maxStocksCriteria },
  maxStocksCriteriaOrder: {
    type: new GraphQLNonNull(GraphQLString),
    resolve: (v) => v.object.maxStocksCriteriaOrder,
  },
  maxSectorConcentration: {
    type: GraphQLString,
    description: "Decimal fraction; null when not set",
    resolve: (v) => obj(v).maxSectorConcentration ?? null,
  },
  costBps: {
    type: new GraphQLNonNull(GraphQLFloat),
    description: "Trading cost in basis points of the traded value at each rebalance (0: none)",
    resolve: (v) => obj(v).costBps ?? 0,
  },
  nextRebalanceDate: { type: GraphQLString, resolve: (v) => v.object.nextRebalanceDate },
  previousRebalanceDate: { type: GraphQLString, resolve: (v) => v.object.previousRebalanceDate },
  ranges: { type: new GraphQLNonNull(RatingRanges), resolve: (v) => v.object.ranges },
});

/** The rebalance status of the portfolio's current rules. */
const statusFields = (): Fields => ({
  status: { type: new GraphQLNonNull(PortfolioStatusEnum), resolve: (v, _a, ctx) => rebalanceStatus(ctx, v).status },
  rebalanceRequestedAt: {
    type: GraphQLString,
    description: "When the latest change asked for a rebalance (user portfolios)",
    resolve: (v, _a, ctx) => rebalanceStatus(ctx, v).requestedAt,
  },
  rebalanceFailedAt: {
    type: GraphQLString,
    description: "When the rebalance of the latest change failed (status FAILED); null otherwise",
    resolve: (v, _a, ctx) => rebalanceStatus(ctx, v).failedAt,
  },
});

type TradesArgs = {
  first?: number;
  after?: string;
  value: number;
  allowFractional: boolean;
  rebalancePeriod: "last_rebalance_date" | "today";
};
const tradesField: Fields[string] = {
  type: new GraphQLNonNull(TradeConnection),
  description: "Buy orders from cash for the latest rebalance (contract §5)",
  args: {
    ...connectionArgs,
    value: { type: new GraphQLNonNull(GraphQLFloat), description: "Portfolio value in USD, a positive integer" },
    allowFractional: { type: GraphQLBoolean, defaultValue: false },
    rebalancePeriod: { type: RebalancePeriodEnum, defaultValue: "last_rebalance_date" },
  },
  extensions: { complexity: connectionCost },
  async resolve(v: VisiblePortfolio, args: TradesArgs, ctx: GqlContext) {
    if (!(Number.isSafeInteger(args.value) && args.value > 0))
      throw InvalidParameter.one("value", "must be a positive integer (USD)");
    const p = pageArgsOf(args);
    const all = await tradesOf(ctx, v, {
      value: args.value,
      allowFractional: args.allowFractional,
      rebalancePeriod: args.rebalancePeriod,
    });
    return connection(p, async (q) => ({
      items: all.slice(q.offset, q.offset + q.limit),
      totalCount: async () => all.length,
    }));
  },
};

/** Holdings, trades, rebalance history and analytics of the backtest. */
const resultFields = (): Fields => ({
  holdings: {
    type: new GraphQLNonNull(StockRatingNodeConnection),
    description: "The selection of previousRebalanceDate with that date's ratings",
    args: listArgs("ticker"),
    extensions: { complexity: connectionCost },
    resolve: (v, args: ListArgs, ctx) =>
      connection(pageArgsOf(args), (p) => holdingsPage(ctx, v, { ...listQuery(args, "ticker"), ...p })),
  },
  trades: tradesField,
  rebalances: {
    type: new GraphQLNonNull(RebalanceConnection),
    description:
      "Every rebalance of the backtest, newest first, with what changed (an extension beyond the interface; " +
      "REST /data/v1/portfolio_rebalances/{id})",
    args: connectionArgs,
    extensions: { complexity: connectionCost },
    resolve: (v, args: { first?: number; after?: string }) =>
      connection(pageArgsOf(args), async (p) => rebalancesPage(v, p)),
  },
  metrics: scoped(
    "portfolioAnalytics",
    metricsField<VisiblePortfolio>(
      async (v) => portfolioSubject(v),
      (ids, ctx) => comparedPortfolios(ctx, ids),
    ),
  ),
  performance: scoped(
    "portfolioAnalytics",
    performanceField<VisiblePortfolio>(
      async (v) => portfolioSubject(v),
      (ids, ctx) => comparedPortfolios(ctx, ids),
    ),
  ),
});

export const PortfolioNode: GraphQLObjectType<VisiblePortfolio, GqlContext> = new GraphQLObjectType<
  VisiblePortfolio,
  GqlContext
>({
  name: "PortfolioNode",
  fields: () => ({ ...resourceFields(), ...statusFields(), ...resultFields() }),
});
export const PortfolioNodeConnection = connectionType("PortfolioNode", PortfolioNode);
