// GET /stock_financials/:ticker?type=annual|quarterly|ttm
import { z } from "zod";
import { financialsLongRows, financialsResponse } from "../../pipeline/financials/index.ts";
import { NotFound } from "../errors.ts";
import { FINANCIAL_CSV_COLUMNS, longRowsPayload } from "../output/payload.ts";
import { FinancialsSchema } from "./resources.ts";
import { defineRoute, tickerOf } from "./route.ts";

export const stockFinancialsQuery = z.object({
  type: z
    .enum(["annual", "quarterly", "ttm"], { error: "must be one of annual, quarterly, ttm" })
    .default("annual")
    .meta({ description: "Statement period type" }),
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
    resolve({ snapshot, params, path }) {
      const ticker = tickerOf({ path });
      const c = snapshot.companyByTicker.get(ticker);
      if (!c) throw new NotFound(`unknown ticker ${ticker}`);
      return {
        key: JSON.stringify([ticker, params.type]),
        build() {
          const resp = financialsResponse({ id: c.id, ticker: c.ticker, name: c.name }, snapshot.financials.get(c.ticker), params.type);
          return longRowsPayload(resp, () => financialsLongRows(resp, params.type), FINANCIAL_CSV_COLUMNS);
        },
      };
    },
  }),
];
