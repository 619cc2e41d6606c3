// GET /stock_financials/:ticker?type=annual|quarterly|ttm
import { z } from "zod";
import { financialsLongRows, financialsWideRows } from "../../pipeline/financials/index.ts";
import { FINANCIAL_CSV_COLUMNS, longRowsPayload, wideRowsPayload } from "../output/payload.ts";
import { stockByTicker, stockFinancials } from "../resources/stocks.ts";
import { FinancialsSchema } from "./resources.ts";
import { defineRoute, tickerOf } from "./route.ts";

export const stockFinancialsQuery = z.object({
  type: z
    .enum(["annual", "quarterly", "ttm"], { error: "must be one of annual, quarterly, ttm" })
    .default("annual")
    .meta({ description: "Statement period type" }),
  layout: z
    .enum(["long", "wide"], { error: "must be long or wide" })
    .default("long")
    .meta({
      description:
        "CSV and Arrow rows: long (statement, period, item, value: one row per item) or wide (one row per " +
        "period, one column `<statement>.<item>` per item, typed in Arrow); the JSON is the same either way",
    }),
});

export const stockFinancialsRoutes = [
  defineRoute({
    id: "stock_financials",
    endpoint: "stock_financials",
    path: "/stock_financials/:ticker",
    summary: "Stock financial statements (income, balance, cash flow, derived)",
    pathParams: { ticker: "Ticker (case-insensitive)" },
    query: stockFinancialsQuery,
    response: FinancialsSchema,
    async resolve({ snapshot, params, path }) {
      const c = await stockByTicker(snapshot, tickerOf({ path }));
      return {
        key: JSON.stringify([c.ticker, params.type, params.layout]),
        async build() {
          const resp = await stockFinancials(snapshot, c, params.type);
          if (params.layout === "wide") return wideRowsPayload(resp, () => financialsWideRows(resp, params.type));
          return longRowsPayload(resp, () => financialsLongRows(resp, params.type), FINANCIAL_CSV_COLUMNS);
        },
      };
    },
  }),
];
