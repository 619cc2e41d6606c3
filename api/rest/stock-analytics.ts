// GET /stock_metrics/:ticker (benchmark, period) and GET /stock_performance/:ticker (type, benchmark)
import { z } from "zod";
import { metricsPayload, seriesPayload } from "../output/payload.ts";
import {
  benchmarkOf,
  checkRollingBeta,
  metricsOf,
  seriesOf,
  stockReturnsOf,
  stockSubject,
} from "../resources/analytics.ts";
import { storedMetrics } from "../resources/snapshot-access.ts";
import { stockByTicker } from "../resources/stocks.ts";
import { metricsQuery, performanceQuery, windowKey } from "./analytics-common.ts";
import { MetricRowSchema, SeriesSchema } from "./resources.ts";
import { defineRoute, tickerOf } from "./route.ts";

export const stockAnalyticsRoutes = [
  defineRoute({
    id: "stock_metrics",
    endpoint: "stock_metrics",
    path: "/stock_metrics/:ticker",
    summary: "Stock performance metrics (QuantStats definitions)",
    pathParams: { ticker: "Ticker (case-insensitive)" },
    query: metricsQuery,
    response: z.array(MetricRowSchema),
    async resolve(ctx) {
      const c = await stockByTicker(ctx.snapshot, tickerOf(ctx));
      const bench = await benchmarkOf(ctx.snapshot, ctx.params.benchmark);
      return {
        key: JSON.stringify([c.ticker, bench?.id ?? null, ctx.params.period ?? null, ...windowKey(ctx.params)]),
        build: async () => {
          // Without a period the stored rows are the answer: read them beside the returns, not
          // after them (a cold request then waits for the slower of the two reads, not both).
          const stored =
            ctx.params.period === undefined && ctx.params.start === undefined && ctx.params.end === undefined
              ? storedMetrics(ctx.snapshot, "stock", [c.ticker], bench?.id ?? null).then((r) => r[0])
              : undefined;
          stored?.catch(() => undefined); // awaited below; not unhandled if the returns fail first
          const subject = await stockSubject(c, stockReturnsOf(ctx.snapshot));
          return metricsPayload(await metricsOf(ctx.snapshot, subject, bench, ctx.params, await stored));
        },
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
    async resolve(ctx) {
      const c = await stockByTicker(ctx.snapshot, tickerOf(ctx));
      const bench = await benchmarkOf(ctx.snapshot, ctx.params.benchmark);
      checkRollingBeta(ctx.params.type, bench);
      return {
        key: JSON.stringify([c.ticker, ctx.params.type, bench?.id ?? null, ...windowKey(ctx.params)]),
        build: async () => {
          const { returns } = await stockSubject(c, stockReturnsOf(ctx.snapshot));
          return seriesPayload(seriesOf(ctx.params.type, c.ticker, returns, bench, ctx.params));
        },
      };
    },
  }),
];
