// GET /stock_metrics/:ticker (benchmark, period) and GET /stock_performance/:ticker (type, benchmark)
import { z } from "zod";
import { NotFound } from "../errors.ts";
import { MetricRowSchema, SeriesSchema } from "./resources.ts";
import { defineRoute, tickerOf, type RouteContext } from "./route.ts";
import { benchmarkOf, checkRollingBeta, metricsBody, metricsQuery, performanceBody, performanceQuery } from "./analytics-common.ts";

const EMPTY = { dates: [] as string[], returns: new Float64Array() };

function stockOf(ctx: Pick<RouteContext<unknown>, "snapshot" | "path">) {
  const ticker = tickerOf(ctx);
  const c = ctx.snapshot.companyByTicker.get(ticker);
  if (!c) throw new NotFound(`unknown ticker ${ticker}`);
  return { ticker: c.ticker, returns: ctx.snapshot.stockReturns.get(c.ticker) ?? EMPTY };
}

export const stockAnalyticsRoutes = [
  defineRoute({
    id: "stock_metrics",
    endpoint: "stock_metrics",
    path: "/stock_metrics/:ticker",
    summary: "Stock performance metrics (QuantStats definitions)",
    pathParams: { ticker: "Ticker (case-insensitive)" },
    query: metricsQuery,
    response: z.array(MetricRowSchema),
    resolve(ctx) {
      const { ticker, returns } = stockOf(ctx);
      const bench = benchmarkOf(ctx.snapshot, ctx.params.benchmark);
      return {
        key: JSON.stringify([ticker, bench?.id ?? null, ctx.params.period ?? null]),
        build: () => metricsBody(ctx.snapshot, "stock", ticker, ticker, returns, bench, ctx.params.period),
      };
    },
  }),
  defineRoute({
    id: "stock_performance",
    endpoint: "stock_performance",
    path: "/stock_performance/:ticker",
    summary: "Stock performance series",
    pathParams: { ticker: "Ticker (case-insensitive)" },
    query: performanceQuery,
    response: z.array(SeriesSchema),
    resolve(ctx) {
      const { ticker, returns } = stockOf(ctx);
      const bench = benchmarkOf(ctx.snapshot, ctx.params.benchmark);
      checkRollingBeta(ctx.params.type, bench);
      return {
        key: JSON.stringify([ticker, ctx.params.type, bench?.id ?? null]),
        build: () => performanceBody(ctx.params.type, ticker, returns, bench),
      };
    },
  }),
];
