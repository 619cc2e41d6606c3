// API keys and scopes. The key comes from the `api_key` query parameter or the `api_key` header;
// absent or unknown → 401. Each endpoint names the scopes it needs; a key lacking one → 403 naming it.
import type { Request } from "express";
import type { ApiKeyInfo, CatalogReader, Scope, User } from "../pipeline/store/catalog/types.ts";
import { Forbidden, Unauthorized } from "./errors.ts";
import { RESOURCE_SCOPES } from "./resources/scopes.ts";

export interface Caller {
  user: User;
  key: ApiKeyInfo;
}

/** Scopes per REST endpoint: each endpoint reads one resource (resources/scopes.ts has the mapping and why). */
export const ENDPOINT_SCOPES = {
  stock_ratings: RESOURCE_SCOPES.stockRatings,
  stock_financials: RESOURCE_SCOPES.stockFinancials,
  stock_metrics: RESOURCE_SCOPES.stockAnalytics,
  stock_performance: RESOURCE_SCOPES.stockAnalytics,
  portfolios: RESOURCE_SCOPES.portfolios,
  portfolio_holdings: RESOURCE_SCOPES.portfolios,
  portfolio_rebalances: RESOURCE_SCOPES.portfolios,
  portfolio_trades: RESOURCE_SCOPES.portfolios,
  portfolio_metrics: RESOURCE_SCOPES.portfolioAnalytics,
  portfolio_performance: RESOURCE_SCOPES.portfolioAnalytics,
  watchlists: RESOURCE_SCOPES.watchlists,
  watchlist_items: RESOURCE_SCOPES.watchlists,
  benchmarks: RESOURCE_SCOPES.benchmarks,
  rating_evidence: RESOURCE_SCOPES.stockRatings,
} as const satisfies Record<string, readonly Scope[]>;
export type EndpointName = keyof typeof ENDPOINT_SCOPES;

/** The api_key query parameter: the key, undefined when absent, null when repeated or empty. */
export function queryKey(query: Record<string, unknown>): string | null | undefined {
  const q = query.api_key;
  if (q === undefined) return undefined;
  return typeof q === "string" && q !== "" ? q : null;
}

/** The presented key, query parameter first, then header; undefined when absent or malformed. */
export function presentedKey(
  req: Request,
  fromQuery: string | null | undefined = queryKey(req.query as Record<string, unknown>),
): string | undefined {
  if (fromQuery !== undefined) return fromQuery ?? undefined; // a malformed query key is not replaced by a header
  const h = req.headers.api_key;
  return typeof h === "string" && h !== "" ? h : undefined;
}

/** The caller a presented key belongs to; null when unknown, revoked or longer than any key. */
export function findCaller(key: string, catalog: CatalogReader): Caller | null {
  if (key.length > 512) return null;
  const found = catalog.authenticate(key);
  return !found || found.key.revokedAt ? null : found;
}

export function authenticate(key: string | undefined, catalog: CatalogReader): Caller {
  if (key === undefined) throw new Unauthorized("an api_key is required (query parameter or header api_key)");
  const found = findCaller(key, catalog);
  if (!found) throw new Unauthorized("unknown api_key");
  return found;
}

/** Whether the key holds every one of `scopes`. */
export const hasScopes = (caller: Caller, scopes: readonly Scope[]): boolean =>
  scopes.every((s) => caller.key.scopes.includes(s));

export function requireScopes(caller: Caller, scopes: readonly Scope[]): void {
  if (scopes.length === 0) return;
  const missing = scopes.filter((s) => !caller.key.scopes.includes(s));
  if (missing.length) throw new Forbidden(missing);
}
