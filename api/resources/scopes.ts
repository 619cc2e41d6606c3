// Scopes per resource (contract §8 names the scopes, not their mapping; this is the mapping).
// REST endpoints and GraphQL fields both take their scopes from here.
// - Portfolio metrics and performance are analytics of a portfolio: both scopes.
// - Watchlist items carry ratings, but they are the watchlist's content: watchlists:read suffices,
//   as portfolios:read suffices for holdings and trades.
// - Benchmarks and a stock's identity (ticker, name, sector) are public reference data: any valid key.
// - The profile has no write scope among the contract's eight: updating one's own profile needs
//   profile:read (the key's user is the only profile it can reach).
import type { Scope } from "../../pipeline/store/catalog/types.ts";

export const RESOURCE_SCOPES = {
  stockRatings: ["ratings:read"],
  stockFinancials: ["financials:read"],
  stockAnalytics: ["analytics:read"],
  stockIdentity: [],
  portfolios: ["portfolios:read"],
  portfolioAnalytics: ["portfolios:read", "analytics:read"],
  portfoliosWrite: ["portfolios:write"],
  watchlists: ["watchlists:read"],
  watchlistsWrite: ["watchlists:write"],
  benchmarks: [],
  profile: ["profile:read"],
  webhooks: ["webhooks:read"],
  webhooksWrite: ["webhooks:write"],
} as const satisfies Record<string, readonly Scope[]>;
export type ResourceName = keyof typeof RESOURCE_SCOPES;

/** The scopes of `needed` that `held` lacks. */
export const missingScopes = (held: readonly Scope[], needed: readonly Scope[]): Scope[] =>
  needed.filter((s) => !held.includes(s));
