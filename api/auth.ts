// API keys and scopes. The key comes from the `api_key` query parameter or the `api_key` header;
// absent or unknown → 401. Each endpoint names the scopes it needs; a key lacking one → 403 naming it.
import type { Request } from "express";
import type { ApiKeyInfo, CatalogReader, Scope, User } from "../pipeline/store/catalog-types.ts";
import { Forbidden, Unauthorized } from "./errors.ts";

export interface Caller {
  user: User;
  key: ApiKeyInfo;
}

/**
 * Scopes per REST endpoint (contract §8 names the scopes, not their mapping; this is the mapping).
 * Portfolio metrics and performance are analytics of a portfolio: they need both scopes.
 * Watchlist items carry ratings, but they are the watchlist's content: watchlists:read suffices,
 * as portfolios:read suffices for holdings. Benchmarks are public reference data: any valid key.
 */
export const ENDPOINT_SCOPES = {
  stock_ratings: ["ratings:read"],
  stock_financials: ["financials:read"],
  stock_metrics: ["analytics:read"],
  stock_performance: ["analytics:read"],
  portfolios: ["portfolios:read"],
  portfolio_holdings: ["portfolios:read"],
  portfolio_trades: ["portfolios:read"],
  portfolio_metrics: ["portfolios:read", "analytics:read"],
  portfolio_performance: ["portfolios:read", "analytics:read"],
  watchlists: ["watchlists:read"],
  watchlist_items: ["watchlists:read"],
  benchmarks: [],
} as const satisfies Record<string, readonly Scope[]>;
export type EndpointName = keyof typeof ENDPOINT_SCOPES;

/** The api_key query parameter: the key, undefined when absent, null when repeated or empty. */
export function queryKey(query: Record<string, unknown>): string | null | undefined {
  const q = query.api_key;
  if (q === undefined) return undefined;
  return typeof q === "string" && q !== "" ? q : null;
}

/** The presented key, query parameter first, then header; undefined when absent or malformed. */
export function presentedKey(req: Request, fromQuery: string | null | undefined = queryKey(req.query as Record<string, unknown>)): string | undefined {
  if (fromQuery !== undefined) return fromQuery ?? undefined; // a malformed query key is not replaced by a header
  const h = req.headers["api_key"];
  return typeof h === "string" && h !== "" ? h : undefined;
}

export function authenticate(key: string | undefined, catalog: CatalogReader): Caller {
  if (key === undefined) throw new Unauthorized("an api_key is required (query parameter or header api_key)");
  if (key.length > 512) throw new Unauthorized("unknown api_key");
  const found = catalog.authenticate(key);
  if (!found || found.key.revokedAt) throw new Unauthorized("unknown api_key");
  return found;
}

export function requireScopes(caller: Caller, scopes: readonly Scope[]): void {
  if (scopes.length === 0) return;
  const missing = scopes.filter((s) => !caller.key.scopes.includes(s));
  if (missing.length) throw new Forbidden(missing);
}
