// Portfolios: list (private=true → the caller's, false → predefined), one, holdings, trades,
// metrics, performance. Thin wrappers over resources/portfolios.ts and resources/analytics.ts.
import { z } from "zod";
import { metricsPayload, objectsPayload, preserializedList, seriesPayload } from "../output/payload.ts";
import { benchmarkOf, checkRollingBeta, metricsOf, seriesOf } from "../resources/analytics.ts";
import { comparedPortfolios, compareMetricsOf, compareSeriesOf } from "../resources/compare.ts";
import type { ReadContext } from "../resources/context.ts";
import { holdingsPage, portfolioList, portfolioSubject, tradesOf, visiblePortfolio } from "../resources/portfolios.ts";
import { compareIds, portfolioMetricsQuery, portfolioPerformanceQuery, windowKey } from "./analytics-common.ts";
import { booleanParam, decimal, limitParam, offsetParam, orderByParam, searchParam } from "./params.ts";
import {
  HoldingSchema,
  MetricRowSchema,
  PORTFOLIO_COLUMNS,
  PortfolioSchema,
  RATED_ITEM_COLUMNS,
  SeriesSchema,
  TRADE_COLUMNS,
  TradeSchema,
} from "./resources.ts";
import { defineRoute, jsonOf, pageArgs } from "./route.ts";

const ID = { id: "Portfolio id" };
const idOf = (ctx: { path: Record<string, string> }) => String(ctx.path.id ?? "");

/** The portfolios `compare` names (null without it), visible as the path's portfolio is; an unknown one is a 400. */
const comparedOf = (ctx: ReadContext, compare: string | undefined) =>
  compare === undefined ? null : comparedPortfolios(ctx, compareIds(compare));

export const portfoliosListQuery = z.object({
  private: booleanParam(true, "true: the caller's portfolios; false: the predefined portfolios"),
});
export const holdingsQuery = z.object({
  search: searchParam,
  order_by: orderByParam("ticker"),
  limit: limitParam,
  offset: offsetParam,
});
export const tradesQuery = z.object({
  value: decimal(
    z
      .number({
        // absent and malformed are different mistakes: each its own message
        error: (i) =>
          i.input === undefined
            ? "required: the portfolio value in USD, a positive integer"
            : "must be a positive integer (USD)",
      })
      .int({ error: "must be a positive integer (USD)" })
      .positive({ error: "must be a positive integer (USD)" })
      .max(Number.MAX_SAFE_INTEGER, { error: "must be a positive integer (USD)" }),
  ).meta({ description: "Portfolio value in USD (required, positive integer)" }),
  allow_fractional: booleanParam(false, "Whether fractional shares are allowed"),
  rebalance_period: z
    .enum(["last_rebalance_date", "today"], { error: "must be last_rebalance_date or today" })
    .default("last_rebalance_date")
    .meta({
      description:
        "last_rebalance_date: trades of the actual last rebalance; today: as if rebalanced on the latest trading date",
    }),
});

export const portfoliosRoutes = [
  defineRoute({
    id: "portfolios_list",
    endpoint: "portfolios",
    path: "/portfolios",
    summary: "Portfolios, list",
    query: portfoliosListQuery,
    response: z.array(PortfolioSchema),
    async resolve(ctx) {
      const build = async () =>
        objectsPayload(
          (await portfolioList(ctx, ctx.params.private)).map((v) => v.object),
          PORTFOLIO_COLUMNS,
        );
      // predefined portfolios depend on the snapshot only; the caller's on the catalog too
      return ctx.params.private ? { build } : { key: "predefined", build };
    },
  }),
  defineRoute({
    id: "portfolio_one",
    endpoint: "portfolios",
    path: "/portfolios/:id",
    summary: "Portfolio, one",
    pathParams: ID,
    query: z.object({}),
    response: PortfolioSchema,
    async resolve(ctx) {
      const v = await visiblePortfolio(ctx, idOf(ctx));
      return { build: () => objectsPayload(v.object, PORTFOLIO_COLUMNS) };
    },
  }),
  defineRoute({
    id: "portfolio_holdings",
    endpoint: "portfolio_holdings",
    path: "/portfolio_holdings/:id",
    summary: "Portfolio holdings (selection of the previous rebalance date)",
    pathParams: ID,
    query: holdingsQuery,
    response: z.array(HoldingSchema),
    async resolve(ctx) {
      const v = await visiblePortfolio(ctx, idOf(ctx));
      const p = ctx.params;
      return {
        key: JSON.stringify([v.id, p.search ?? "", p.order_by, p.limit, p.offset]),
        async build() {
          const page = await holdingsPage(ctx, v, { search: p.search, orderBy: p.order_by, ...pageArgs(p) });
          return { ...preserializedList(page.items.map(jsonOf), RATED_ITEM_COLUMNS), total: await page.totalCount() };
        },
      };
    },
  }),
  defineRoute({
    id: "portfolio_trades",
    endpoint: "portfolio_trades",
    path: "/portfolio_trades/:id",
    summary: "Portfolio trades (Buy orders from cash) for the latest rebalance",
    pathParams: ID,
    query: tradesQuery,
    response: z.array(TradeSchema),
    async resolve(ctx) {
      const v = await visiblePortfolio(ctx, idOf(ctx));
      const p = ctx.params;
      return {
        key: JSON.stringify([v.id, p.value, p.allow_fractional, p.rebalance_period]),
        build: async () =>
          objectsPayload(
            await tradesOf(ctx, v, {
              value: p.value,
              allowFractional: p.allow_fractional,
              rebalancePeriod: p.rebalance_period,
            }),
            TRADE_COLUMNS,
          ),
      };
    },
  }),
  defineRoute({
    id: "portfolio_metrics",
    endpoint: "portfolio_metrics",
    path: "/portfolio_metrics/:id",
    summary: "Portfolio performance metrics",
    pathParams: ID,
    query: portfolioMetricsQuery,
    response: z.array(MetricRowSchema),
    async resolve(ctx) {
      const v = await visiblePortfolio(ctx, idOf(ctx));
      const bench = await benchmarkOf(ctx.snapshot, ctx.params.benchmark);
      const others = await comparedOf(ctx, ctx.params.compare);
      return {
        key: JSON.stringify([v.id, bench?.id ?? null, ctx.params.period ?? null, ...windowKey(ctx.params)]),
        build: async () =>
          metricsPayload(
            others
              ? await compareMetricsOf(ctx.snapshot, portfolioSubject(v), others, bench, ctx.params)
              : await metricsOf(ctx.snapshot, portfolioSubject(v), bench, ctx.params),
          ),
      };
    },
  }),
  defineRoute({
    id: "portfolio_performance",
    endpoint: "portfolio_performance",
    path: "/portfolio_performance/:id",
    summary: "Portfolio performance series",
    pathParams: ID,
    query: portfolioPerformanceQuery,
    response: z.array(SeriesSchema),
    async resolve(ctx) {
      const v = await visiblePortfolio(ctx, idOf(ctx));
      const bench = await benchmarkOf(ctx.snapshot, ctx.params.benchmark);
      checkRollingBeta(ctx.params.type, bench);
      const others = await comparedOf(ctx, ctx.params.compare);
      const { type } = ctx.params;
      return {
        key: JSON.stringify([v.id, type, bench?.id ?? null, ...windowKey(ctx.params)]),
        build: () =>
          seriesPayload(
            others
              ? compareSeriesOf(type, portfolioSubject(v), "Portfolio", others, bench, ctx.params)
              : seriesOf(type, "Portfolio", portfolioSubject(v).returns, bench, ctx.params),
          ),
      };
    },
  }),
];
