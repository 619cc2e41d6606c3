// Portfolios: list (private=true → the caller's, false → predefined), one, holdings, trades,
// metrics, performance. A user portfolio of another user is 404 (existence is not leaked).
import { z } from "zod";
import { computeTrades } from "../../pipeline/portfolios/index.ts";
import type { PortfolioResult } from "../../pipeline/store/model.ts";
import type { Company, HoldingRow } from "../../pipeline/types.ts";
import { NotFound } from "../errors.ts";
import { objectsPayload, preserializedList } from "../output/payload.ts";
import { comparator, matchesSearch, type Sortable } from "./indexes.ts";
import { booleanParam, decimal, limitParam, offsetParam, orderByParam, searchParam } from "./params.ts";
import {
  HoldingSchema,
  MetricRowSchema,
  PORTFOLIO_COLUMNS,
  PortfolioSchema,
  portfolioObject,
  RATED_ITEM_COLUMNS,
  ratedStockItem,
  SeriesSchema,
  TRADE_COLUMNS,
  TradeSchema,
  userPortfolioObject,
} from "./resources.ts";
import { defineRoute, page, type RouteContext } from "./route.ts";
import { benchmarkOf, checkRollingBeta, metricsBody, metricsQuery, performanceBody, performanceQuery } from "./analytics-common.ts";

const EMPTY = { dates: [] as string[], returns: new Float64Array() };
const ID = { id: "Portfolio id" };

interface Visible {
  id: string;
  object: () => ReturnType<typeof portfolioObject>;
  result: PortfolioResult | undefined;
}

/** The portfolio when the caller may see it: predefined, or a user portfolio of the caller. */
function visible(ctx: Pick<RouteContext<unknown>, "snapshot" | "catalog" | "caller" | "path">): Visible {
  const id = String(ctx.path.id ?? "");
  const result = ctx.snapshot.portfolios.get(id);
  if (result && result.ownerId === null)
    return { id, result, object: () => portfolioObject(result.rules, null, result.createdAt, result) };
  const up = ctx.catalog.userPortfolio(id);
  if (up && up.ownerId === ctx.caller.user.id) {
    const r = result && result.ownerId === up.ownerId ? result : undefined;
    return { id, result: r, object: () => userPortfolioObject(up, r) };
  }
  throw new NotFound(`unknown portfolio ${id}`);
}

const numericId = (a: string, b: string) => {
  const x = Number(a);
  const y = Number(b);
  if (Number.isFinite(x) && Number.isFinite(y) && x !== y) return x - y;
  return a < b ? -1 : a > b ? 1 : 0;
};

export const portfoliosListQuery = z.object({
  private: booleanParam(true, "true: the caller's portfolios; false: the predefined portfolios"),
});
export const holdingsQuery = z.object({ search: searchParam, order_by: orderByParam("ticker"), limit: limitParam, offset: offsetParam });
export const tradesQuery = z.object({
  value: decimal(
    z
      .number({ error: "required: the portfolio value in USD, a positive integer" })
      .int({ error: "must be a positive integer (USD)" })
      .positive({ error: "must be a positive integer (USD)" })
      .max(Number.MAX_SAFE_INTEGER, { error: "must be a positive integer (USD)" }),
  ).meta({ description: "Portfolio value in USD (required, positive integer)" }),
  allow_fractional: booleanParam(false, "Whether fractional shares are allowed"),
  rebalance_period: z
    .enum(["last_rebalance_date", "today"], { error: "must be last_rebalance_date or today" })
    .default("last_rebalance_date")
    .meta({ description: "last_rebalance_date: trades of the actual last rebalance; today: as if rebalanced on the latest trading date" }),
});

interface HoldingEntry extends Sortable {
  value: ReturnType<typeof ratedStockItem>;
}

function holdingEntries(h: HoldingRow[], companies: Map<string, Company>): HoldingEntry[] {
  return h.map((row) => {
    const company = companies.get(row.ticker.toUpperCase()) ?? placeholder(row.ticker);
    return { company, ratings: row, value: ratedStockItem(row.date, company, row) };
  });
}
const placeholder = (ticker: string): Company => ({
  id: "",
  ticker,
  name: ticker,
  sector: "",
  sectorId: 0,
  industry: "",
  industryId: 0,
  sharesOutstanding: null,
  marketCap: null,
});

export const portfoliosRoutes = [
  defineRoute({
    id: "portfolios_list",
    endpoint: "portfolios",
    path: "/portfolios",
    summary: "Portfolios, list",
    query: portfoliosListQuery,
    response: z.array(PortfolioSchema),
    resolve({ snapshot, catalog, caller, params }) {
      if (!params.private) {
        return {
          key: "predefined",
          build() {
            const list = [...snapshot.portfolios.values()].filter((p) => p.ownerId === null).sort((a, b) => numericId(a.rules.id, b.rules.id));
            return objectsPayload(list.map((p) => portfolioObject(p.rules, null, p.createdAt, p)), PORTFOLIO_COLUMNS);
          },
        };
      }
      return {
        build() {
          const mine = [...catalog.userPortfoliosOf(caller.user.id)].sort((a, b) => numericId(a.id, b.id));
          return objectsPayload(
            mine.map((p) => {
              const r = snapshot.portfolios.get(p.id);
              return userPortfolioObject(p, r && r.ownerId === p.ownerId ? r : undefined);
            }),
            PORTFOLIO_COLUMNS,
          );
        },
      };
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
    resolve(ctx) {
      const v = visible(ctx);
      return { build: () => objectsPayload(v.object(), PORTFOLIO_COLUMNS) };
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
    resolve(ctx) {
      const v = visible(ctx);
      const p = ctx.params;
      return {
        key: JSON.stringify([v.id, p.search ?? "", p.order_by, p.limit, p.offset]),
        build() {
          let list = holdingEntries(v.result?.holdings ?? [], ctx.snapshot.companyByTicker);
          const needle = p.search?.toUpperCase();
          if (needle) list = list.filter((e) => matchesSearch(e.company, needle));
          list.sort(comparator(p.order_by));
          const items = page(list, p.offset, p.limit);
          return preserializedList(items.map((e) => ({ value: e.value, json: JSON.stringify(e.value) })), RATED_ITEM_COLUMNS);
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
    resolve(ctx) {
      const v = visible(ctx);
      const p = ctx.params;
      return {
        key: JSON.stringify([v.id, p.value, p.allow_fractional, p.rebalance_period]),
        build() {
          const holdings = (p.rebalance_period === "today" ? v.result?.todayHoldings : v.result?.holdings) ?? [];
          const trades = computeTrades({ holdings, companies: ctx.snapshot.companyByTicker, value: p.value, allowFractional: p.allow_fractional });
          return objectsPayload(trades, TRADE_COLUMNS);
        },
      };
    },
  }),
  defineRoute({
    id: "portfolio_metrics",
    endpoint: "portfolio_metrics",
    path: "/portfolio_metrics/:id",
    summary: "Portfolio performance metrics",
    pathParams: ID,
    query: metricsQuery,
    response: z.array(MetricRowSchema),
    resolve(ctx) {
      const v = visible(ctx);
      const bench = benchmarkOf(ctx.snapshot, ctx.params.benchmark);
      return {
        key: JSON.stringify([v.id, bench?.id ?? null, ctx.params.period ?? null]),
        build: () => metricsBody(ctx.snapshot, "portfolio", v.id, "Portfolio", v.result?.returns ?? EMPTY, bench, ctx.params.period),
      };
    },
  }),
  defineRoute({
    id: "portfolio_performance",
    endpoint: "portfolio_performance",
    path: "/portfolio_performance/:id",
    summary: "Portfolio performance series",
    pathParams: ID,
    query: performanceQuery,
    response: z.array(SeriesSchema),
    resolve(ctx) {
      const v = visible(ctx);
      const bench = benchmarkOf(ctx.snapshot, ctx.params.benchmark);
      checkRollingBeta(ctx.params.type, bench);
      return {
        key: JSON.stringify([v.id, ctx.params.type, bench?.id ?? null]),
        build: () => performanceBody(ctx.params.type, "Portfolio", v.result?.returns ?? EMPTY, bench),
      };
    },
  }),
];
