// GET /portfolio_rebalances/:id — a portfolio's rebalance history, newest first: an extension
// beyond the interface's fifteen endpoints (docs/api/rest.md), visible exactly as its holdings are.
import { z } from "zod";
import { objectsPayload } from "../output/payload.ts";
import { visiblePortfolio } from "../resources/portfolios.ts";
import { rebalancesPage } from "../resources/rebalances.ts";
import { limitParam, offsetParam } from "./params.ts";
import { defineRoute, pageArgs } from "./route.ts";

export const REBALANCE_COLUMNS = ["date", "holdingsCount", "added", "removed", "turnover", "cost"];
const tickers = z.array(z.string());
export const RebalanceSchema = z
  .object({
    date: z.string().meta({ format: "date" }),
    holdingsCount: z.number().int().meta({ description: "Stocks held from this rebalance on" }),
    added: tickers.meta({ description: "Tickers held now and not at the rebalance before (all at the first), sorted" }),
    removed: tickers.meta({ description: "Tickers held at the rebalance before and not now, sorted" }),
    turnover: z.number().nullable().meta({
      description: "Σ|target value − value before trading| over the stocks / portfolio value before costs",
    }),
    cost: z.number().nullable().meta({
      description: "costBps / 10,000 × turnover: the fraction of the portfolio's value the trading cost",
    }),
  })
  .meta({ id: "PortfolioRebalance" });

export const rebalancesQuery = z.object({ limit: limitParam, offset: offsetParam });

export const portfolioRebalancesRoutes = [
  defineRoute({
    id: "portfolio_rebalances",
    endpoint: "portfolio_rebalances",
    path: "/portfolio_rebalances/:id",
    summary: "Portfolio rebalance history, newest first (extension beyond the interface)",
    pathParams: { id: "Portfolio id" },
    query: rebalancesQuery,
    response: z.array(RebalanceSchema),
    async resolve(ctx) {
      const v = await visiblePortfolio(ctx, String(ctx.path.id ?? ""));
      const p = ctx.params;
      return {
        key: JSON.stringify([v.id, p.limit, p.offset]),
        async build() {
          const page = rebalancesPage(v, pageArgs(p));
          return { ...objectsPayload(page.items, REBALANCE_COLUMNS), total: await page.totalCount() };
        },
      };
    },
  }),
];
