// Stocks: StockType (identity, any key) with its rating, rating history, financials, metrics and
// performance (each behind its resource's scopes); StockRatingNode (stock ratings, holdings).
import {
  GraphQLBoolean,
  GraphQLEnumType,
  GraphQLFloat,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLString,
} from "graphql";
import { financialArrays } from "../../../pipeline/financials/index.ts";
import type { FinancialType } from "../../../pipeline/store/snapshot/model.ts";
import type { Company, RatingComponent } from "../../../pipeline/types.ts";
import { stockSubject } from "../../resources/analytics.ts";
import { comparedStocks } from "../../resources/compare.ts";
import type { RatedStockItem } from "../../resources/shapes.ts";
import { itemCompany, marketCapStr, ratedStockItemOf } from "../../resources/shapes.ts";
import { ratingComponents } from "../../resources/snapshot-access.ts";
import { ratingHistoryPage, stockFinancials } from "../../resources/stocks.ts";
import type { GqlContext } from "../context.ts";
import { costNote } from "../cost.ts";
import { inTurn } from "../field-turns.ts";
import { connection, connectionArgs, connectionCost, connectionType, pageArgsOf } from "../relay.ts";
import { scoped } from "../scopes.ts";
import { metricsField, performanceField } from "./analytics.ts";
import { DateArg, dateArg, ratingFields } from "./common.ts";

const Named = (name: string) =>
  new GraphQLObjectType({
    name,
    fields: { id: { type: new GraphQLNonNull(GraphQLInt) }, name: { type: new GraphQLNonNull(GraphQLString) } },
  });
const SectorType = Named("SectorType");
/** `compare` on a stock's analytics: tickers, their returns read in the request's batch. */
const compareStocks = (ids: string[], ctx: GqlContext) => comparedStocks(ctx.snapshot, ids, ctx.batch.stockReturns);
const IndustryType = Named("IndustryType");

const FinancialItem = new GraphQLObjectType<[string, string | number | null]>({
  name: "FinancialItem",
  fields: {
    item: {
      type: new GraphQLNonNull(GraphQLString),
      description: "Row key exactly as the interface names it",
      resolve: ([k]) => k,
    },
    value: {
      type: GraphQLString,
      description: "Money as integer digits, ratios as decimal strings, dates as YYYY-MM-DD; null when missing",
      resolve: ([, v]) => (v == null ? null : String(v)),
    },
    number: {
      type: GraphQLFloat,
      resolve: ([, v]) => (v == null || v === "" || !Number.isFinite(Number(v)) ? null : Number(v)),
    },
  },
});
type FinRow = Record<string, string | number | null>;
const FIXED = new Set(["Fiscal Year", "Fiscal Period", "Report Date"]);
const FinancialRowType = new GraphQLObjectType<FinRow>({
  name: "FinancialRow",
  fields: {
    fiscalYear: { type: GraphQLInt, resolve: (r) => r["Fiscal Year"] },
    fiscalPeriod: { type: GraphQLString, resolve: (r) => r["Fiscal Period"] },
    reportDate: { type: GraphQLString, resolve: (r) => r["Report Date"] },
    items: {
      type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(FinancialItem))),
      resolve: (r) => Object.entries(r).filter(([k]) => !FIXED.has(k)),
    },
  },
});
const rows = () => new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(FinancialRowType)));
type Fin = { response: Record<string, unknown>; type: FinancialType };
const arrayOf = (statement: string) => (f: Fin) =>
  f.response[financialArrays(f.type).find(([, st]) => st === statement)![0]];
/** A statement's rows, completed in a turn of their own (about 600 items each: field-turns.ts). */
const statement = (name: string) => (f: Fin, _a: unknown, ctx: GqlContext) =>
  inTurn(ctx.deadline, () => arrayOf(name)(f));
const StockFinancialsType = new GraphQLObjectType<Fin, GqlContext>({
  name: "StockFinancials",
  description: "Statements ascending by report date (contract §4); arrays empty for a stock without statements.",
  fields: {
    type: { type: new GraphQLNonNull(GraphQLString), resolve: (f) => f.type },
    income: { type: rows(), resolve: statement("income") },
    balance: { type: rows(), resolve: statement("balance") },
    cashFlow: { type: rows(), resolve: statement("cashflow") },
    derived: { type: rows(), resolve: statement("derived") },
  },
});
const FinancialTypeEnum = new GraphQLEnumType({
  name: "FinancialType",
  values: { ANNUAL: { value: "annual" }, QUARTERLY: { value: "quarterly" }, TTM: { value: "ttm" } },
});

export const StockType: GraphQLObjectType<Company, GqlContext> = new GraphQLObjectType<Company, GqlContext>({
  name: "StockType",
  fields: () => ({
    id: { type: new GraphQLNonNull(GraphQLString) },
    ticker: { type: new GraphQLNonNull(GraphQLString) },
    name: { type: new GraphQLNonNull(GraphQLString) },
    marketCap: { type: GraphQLString, description: "USD, integer digits", resolve: (c) => marketCapStr(c.marketCap) },
    sector: { type: new GraphQLNonNull(SectorType), resolve: (c) => ({ id: c.sectorId, name: c.sector }) },
    industry: { type: new GraphQLNonNull(IndustryType), resolve: (c) => ({ id: c.industryId, name: c.industry }) },
    rating: scoped("stockRatings", {
      type: StockRatingNode,
      description: "The latest rating on or before `date` (latest when omitted); null when none.",
      args: { date: DateArg },
      async resolve(c, args: { date?: string | null }, ctx) {
        const row = await ctx.batch.ratingAsOf(c.ticker, dateArg(args.date));
        return row ? ratedStockItemOf(row.date, c, row) : null;
      },
    }),
    ratings: scoped("stockRatings", {
      type: StockRatingNodeConnection,
      description: "Rating history, ascending by date (descending: true for newest first).",
      args: { ...connectionArgs, descending: { type: GraphQLBoolean, defaultValue: false } },
      extensions: { complexity: connectionCost },
      resolve: (c, args: { first?: number; after?: string; descending: boolean }, ctx) =>
        connection(pageArgsOf(args), (p) => ratingHistoryPage(ctx.snapshot, c, { ...p, descending: args.descending })),
    }),
    financials: scoped("stockFinancials", {
      type: StockFinancialsType,
      description: `The stock's statements of one type. ${costNote("financials")}`,
      args: { type: { type: new GraphQLNonNull(FinancialTypeEnum), defaultValue: "annual" } },
      resolve: async (c, args: { type: FinancialType }, ctx) => {
        const statements = await ctx.batch.financials(c.ticker);
        // shaping the statements is the costly step: in its own turn
        return inTurn(ctx.deadline, async () => ({
          type: args.type,
          response: await stockFinancials(ctx.snapshot, c, args.type, async () => statements),
        }));
      },
    }),
    metrics: scoped(
      "stockAnalytics",
      metricsField<Company>((c, ctx) => stockSubject(c, ctx.batch.stockReturns), compareStocks),
    ),
    performance: scoped(
      "stockAnalytics",
      performanceField<Company>((c, ctx) => stockSubject(c, ctx.batch.stockReturns), compareStocks),
    ),
  }),
});

/** One factor of a computed rating (pipeline/ratings/components.ts). */
const RatingComponentType = new GraphQLObjectType<RatingComponent>({
  name: "RatingComponent",
  description: "One factor of the factor model's rating (docs/ratings.md); null values: no input for it.",
  fields: {
    rating: { type: new GraphQLNonNull(GraphQLString), description: "The rating it feeds (snake_case)" },
    factor: { type: new GraphQLNonNull(GraphQLString) },
    raw: { type: GraphQLFloat, description: "Its raw value on the rating date" },
    score: { type: GraphQLFloat, description: "Its 0..10 score within the date's cross-section" },
    fiscalYear: { type: GraphQLInt, description: "The statement a statement factor came from" },
    publishDate: { type: GraphQLString, description: "That statement's Publish Date (YYYY-MM-DD)" },
  },
});

/** A stock's rating on a date (stock ratings list, rating history, portfolio holdings). */
export const StockRatingNode: GraphQLObjectType<RatedStockItem, GqlContext> = new GraphQLObjectType<
  RatedStockItem,
  GqlContext
>({
  name: "StockRatingNode",
  fields: () => ({
    stock: {
      type: new GraphQLNonNull(StockType),
      resolve: (r, _a, ctx) => itemCompany(r) ?? ctx.batch.company(r.stock.ticker),
    },
    date: { type: new GraphQLNonNull(GraphQLString) },
    ...ratingFields(),
    components: {
      type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(RatingComponentType))),
      description:
        "The rating's components: every factor's raw value, score and statement; empty for vendor ratings. " +
        costNote("components"),
      resolve: (r, _a, ctx) => ratingComponents(ctx.snapshot, r.stock.ticker, r.date),
    },
  }),
});

export const StockRatingNodeConnection = connectionType("StockRatingNode", StockRatingNode);
export const StockTypeConnection = connectionType("StockType", StockType);
