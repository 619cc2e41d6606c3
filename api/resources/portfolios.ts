// Portfolios: predefined ones (from the snapshot) and the caller's own (rules from the catalog,
// results from the snapshot's backtest). Another user's portfolio is "not found".
import { computeTrades, type TradeRow } from "../../pipeline/portfolios/index.ts";
import type { UserPortfolio } from "../../pipeline/store/catalog/types.ts";
import type { PortfolioResult, RebalanceChange } from "../../pipeline/store/snapshot/model.ts";
import type { Company, HoldingRow, PortfolioRules } from "../../pipeline/types.ts";
import { NotFound } from "../errors.ts";
import type { Subject } from "./analytics.ts";
import type { ReadContext } from "./context.ts";
import {
  comparator,
  matchesSearch,
  numericId,
  type OrderBy,
  type Page,
  type PageArgs,
  pageOf,
  type Sortable,
} from "./ordering.ts";
import {
  type PortfolioObject,
  portfolioObject,
  type RatedStockItem,
  ratedStockItemOf,
  userPortfolioObject,
} from "./shapes.ts";
import * as access from "./snapshot-access.ts";

const EMPTY = { dates: [] as string[], returns: new Float64Array() };

export interface VisiblePortfolio {
  id: string;
  /** the catalog's record for a user portfolio; undefined for a predefined one */
  user?: UserPortfolio;
  /** the snapshot's backtest, when the served snapshot has one for these rules' owner */
  result: PortfolioResult | undefined;
  object: PortfolioObject;
}

const userVisible = (up: UserPortfolio, r: PortfolioResult | undefined): VisiblePortfolio => {
  const result = r && r.ownerId === up.ownerId ? r : undefined;
  return { id: up.id, user: up, result, object: userPortfolioObject(up, result) };
};
const predefinedVisible = (r: PortfolioResult): VisiblePortfolio => ({
  id: r.rules.id,
  result: r,
  object: portfolioObject(r.rules, null, r.createdAt, r),
});

/** The portfolio when the caller may see it: predefined, or a user portfolio of the caller. */
export async function visiblePortfolio(ctx: ReadContext, id: string): Promise<VisiblePortfolio> {
  const [result] = await access.portfolioResults(ctx.snapshot, [id]);
  if (result && result.ownerId === null) return predefinedVisible(result);
  const up = ctx.catalog.userPortfolio(id);
  if (up && up.ownerId === ctx.caller.user.id) return userVisible(up, result);
  throw new NotFound(`unknown portfolio ${id}`);
}

/** private=true: the caller's portfolios; false: the predefined ones. Ordered by id. */
export async function portfolioList(ctx: ReadContext, own: boolean): Promise<VisiblePortfolio[]> {
  if (!own) {
    const list = await access.predefinedPortfolios(ctx.snapshot);
    return list.sort((a, b) => numericId(a.rules.id, b.rules.id)).map(predefinedVisible);
  }
  const mine = [...ctx.catalog.userPortfoliosOf(ctx.caller.user.id)].sort((a, b) => numericId(a.id, b.id));
  const results = await access.portfolioResults(
    ctx.snapshot,
    mine.map((p) => p.id),
  );
  return mine.map((p, i) => userVisible(p, results[i]));
}

export interface HoldingsQuery extends PageArgs {
  search?: string;
  orderBy: OrderBy;
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

async function withCompanies(ctx: ReadContext, rows: HoldingRow[]): Promise<(Sortable & { row: HoldingRow })[]> {
  const cs = await access.companiesByTicker(
    ctx.snapshot,
    rows.map((r) => r.ticker),
  );
  return rows.map((row, i) => ({ company: cs[i] ?? placeholder(row.ticker), ratings: row, row }));
}

/** Holdings of the previous rebalance date, searched, ordered, one page. */
export async function holdingsPage(
  ctx: ReadContext,
  v: VisiblePortfolio,
  q: HoldingsQuery,
): Promise<Page<RatedStockItem>> {
  let list = await withCompanies(ctx, v.result?.holdings ?? []);
  const needle = q.search?.toUpperCase();
  if (needle) list = list.filter((e) => matchesSearch(e.company, needle));
  list.sort(comparator(q.orderBy));
  const page = pageOf(list, q);
  return { items: page.items.map((e) => ratedStockItemOf(e.row.date, e.company, e.row)), totalCount: page.totalCount };
}

export interface TradesQuery {
  value: number;
  allowFractional: boolean;
  rebalancePeriod: "last_rebalance_date" | "today";
}

/** Buy orders from cash for the latest rebalance (or as if rebalanced on the latest trading date). */
export async function tradesOf(ctx: ReadContext, v: VisiblePortfolio, q: TradesQuery): Promise<TradeRow[]> {
  const holdings = (q.rebalancePeriod === "today" ? v.result?.todayHoldings : v.result?.holdings) ?? [];
  const cs = await access.companiesByTicker(
    ctx.snapshot,
    holdings.map((h) => h.ticker),
  );
  const companies = new Map<string, Company>();
  for (const c of cs) if (c) companies.set(c.ticker, c);
  return computeTrades({ holdings, companies, value: q.value, allowFractional: q.allowFractional });
}

export const portfolioSubject = (v: VisiblePortfolio): Subject => ({
  kind: "portfolio",
  id: v.id,
  column: "Portfolio",
  returns: v.result?.returns ?? EMPTY,
  ...(v.result?.rules.costBps ? { turnover: turnoverOf(v.result.rebalances) } : {}),
});

/** The rebalances' turnover (a snapshot from before costs has none: then no turnover row). */
function turnoverOf(rebalances: RebalanceChange[] | undefined) {
  const known = (rebalances ?? []).filter((r) => r.turnover !== null);
  return known.length ? known.map((r) => ({ date: r.date, turnover: r.turnover! })) : undefined;
}

export type RebalanceStatus = "PENDING" | "READY" | "FAILED";

/** Rule fields compared key-order-free (the snapshot stores them as JSON written elsewhere). */
const canonical = (r: PortfolioRules) =>
  JSON.stringify([
    r.name,
    r.description,
    r.rebalanceFrequency,
    r.maxStocks,
    r.maxStocksCriteria,
    r.maxStocksCriteriaOrder,
    r.maxSectorConcentration ?? null,
    r.costBps ?? 0,
    Object.entries(r.ranges ?? {})
      .filter(([, b]) => b)
      .sort(),
  ]);

/**
 * A user portfolio is READY when the served snapshot holds its backtest for the current rules,
 * published at or after the last change was requested; FAILED when the rebalance that change asked
 * for failed for good (until the next change, or a run that publishes it); PENDING otherwise.
 * Predefined portfolios are always READY.
 */
export function rebalanceStatus(
  ctx: ReadContext,
  v: VisiblePortfolio,
): { status: RebalanceStatus; requestedAt: string | null; failedAt: string | null } {
  if (!v.user) return { status: "READY", requestedAt: null, failedAt: null };
  const requestedAt = ctx.catalog.rebalanceRequestedAt?.(v.id) ?? null;
  const { ownerId: _o, createdAt: _c, ...rules } = v.user;
  const fresh = !!v.result && canonical(v.result.rules) === canonical(rules);
  const after = requestedAt === null || Date.parse(access.snapshotCreatedAt(ctx.snapshot)) >= Date.parse(requestedAt);
  if (fresh && after) return { status: "READY", requestedAt, failedAt: null };
  const failed = ctx.catalog.rebalanceFailure?.(v.id) ?? null;
  return { status: failed ? "FAILED" : "PENDING", requestedAt, failedAt: failed?.failedAt ?? null };
}
