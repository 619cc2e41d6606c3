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
import { comparedStocks, compareMetricsOf, compareSeriesOf } from "../resources/compare.ts";
import { type SnapshotRef, storedMetrics } from "../resources/snapshot-access.ts";
import { stockByTicker } from "../resources/stocks.ts";
import { compareIds, stockMetricsQuery, stockPerformanceQuery, windowKey } from "./analytics-common.ts";
import { MetricRowSchema, SeriesSchema } from "./resources.ts";
import { defineRoute, tickerOf } from "./route.ts";

/** The stocks `compare` names (null without it), each with its returns; an unknown one is a 400. */
const comparedOf = (s: SnapshotRef, compare: string | undefined) =>
  compare === undefined ? null : comparedStocks(s, compareIds(compare));

export const stockAnalyticsRoutes = [
  defineRoute({
    id: "stock_metrics",
    endpoint: "stock_metrics",
    path: "/stock_metrics/:ticker",
    summary: "Stock performance metrics (QuantStats definitions)",
    pathParams: { ticker: "Ticker (case-insensitive)" },
    query: stockMetricsQuery,
    response: z.array(MetricRowSchema),
    async resolve(ctx) {
      const c = await stockByTicker(ctx.snapshot, tickerOf(ctx));
      const bench = await benchmarkOf(ctx.snapshot, ctx.params.benchmark);
      const others = await comparedOf(ctx.snapshot, ctx.params.compare);
      return {
        key: JSON.stringify([c.ticker, bench?.id ?? null, ctx.params.period ?? null, ...windowKey(ctx.params)]),
        build: async () => {
          if (others) {
            const subject = await stockSubject(c, stockReturnsOf(ctx.snapshot));
            return metricsPayload(await compareMetricsOf(ctx.snapshot, subject, others, bench, ctx.params));
          }
          // Without a period the stored rows are the answer: read them beside the returns, not
          // after them (a cold request then waits for the slower of the two reads, not both).
          const stored =
            ctx.params.period === undefined && windowKey(ctx.params).length === 0
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
    query: stockPerformanceQuery,
    response: z.array(SeriesSchema),
    async resolve(ctx) {
      const c = await stockByTicker(ctx.snapshot, tickerOf(ctx));
      const bench = await benchmarkOf(ctx.snapshot, ctx.params.benchmark);
      checkRollingBeta(ctx.params.type, bench);
      const others = await comparedOf(ctx.snapshot, ctx.params.compare);
      return {
        key: JSON.stringify([c.ticker, ctx.params.type, bench?.id ?? null, ...windowKey(ctx.params)]),
        build: async () => {
          const subject = await stockSubject(c, stockReturnsOf(ctx.snapshot));
          if (others)
            return seriesPayload(compareSeriesOf(ctx.params.type, subject, c.ticker, others, bench, ctx.params));
          return seriesPayload(seriesOf(ctx.params.type, c.ticker, subject.returns, bench, ctx.params));
        },
      };
    },
  }),
];
