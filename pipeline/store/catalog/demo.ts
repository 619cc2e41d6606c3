// The demo user: one active key with every scope, one private portfolio, one watchlist of 10 stocks,
// so every endpoint has something to show on a fresh start.

import type { Company } from "../../types.ts";
import { hashKey } from "./api-keys.ts";
import type { Catalog } from "./catalog.ts";
import { SCOPES, type User } from "./types.ts";

export const DEMO_EMAIL = "demo@example.com";

export const DEMO_PORTFOLIO = {
  name: "Demo quality momentum",
  description:
    "Top 15 by total rating among stocks with a return rating of 5 or more; monthly; at most 40% in one sector.",
  rebalanceFrequency: 1,
  maxStocks: 15,
  maxStocksCriteria: "total_rating" as const,
  maxStocksCriteriaOrder: "descending" as const,
  maxSectorConcentration: 0.4,
  ranges: { return_rating: [5, 10] as [number, number] },
};

/**
 * Ensures the demo user and portfolio exist and leaves the demo user exactly one active key: the
 * DEMO_API_KEY when set, else a fresh one (the plain key is never stored, so an earlier one cannot be
 * shown again). Every other key of the demo user is revoked, so starts do not pile up admin keys.
 * Returns the key to print (null when DEMO_API_KEY was already the demo user's key).
 */
export async function ensureDemoUser(
  catalog: Catalog,
  fixedKey: string | null,
): Promise<{ user: User; key: string | null; created: boolean }> {
  // Hosts started together on one store: another made the demo user, or inserted the same
  // DEMO_API_KEY, between our read and our write (each step of the other's can cost us one try).
  // Read what it wrote and go on from there.
  for (let attempt = 1; ; attempt++) {
    try {
      return await ensureDemoUserOnce(catalog, fixedKey);
    } catch (e) {
      if (attempt >= 5) throw e;
      await catalog.refresh(); // false when a notification reloaded the mirror already: try again all the same
    }
  }
}

async function ensureDemoUserOnce(
  catalog: Catalog,
  fixedKey: string | null,
): Promise<{ user: User; key: string | null; created: boolean }> {
  let user = catalog.userByEmail(DEMO_EMAIL);
  const created = !user;
  user ??= await catalog.createUser({
    email: DEMO_EMAIL,
    firstName: "Demo",
    lastName: "User",
    phoneNumber: "+1 555 0100",
  });
  if (catalog.userPortfoliosOf(user.id).length === 0) await catalog.createUserPortfolio(user.id, DEMO_PORTFOLIO);
  if (fixedKey) {
    const known = catalog.authenticate(fixedKey);
    if (known?.user.id === user.id) {
      await catalog.revokeKeysOfUserExcept(user.id, known.key.id);
      return { user, key: null, created };
    }
    if (catalog.listKeys().some((k) => k.id === `key_${hashKey(fixedKey).slice(0, 12)}`))
      throw new Error("DEMO_API_KEY is a revoked key or belongs to another user; choose another value");
    const { id } = await catalog.createKey(user.id, [...SCOPES], fixedKey);
    await catalog.revokeKeysOfUserExcept(user.id, id);
    return { user, key: fixedKey, created };
  }
  // Created before the old ones are revoked: the demo user is never left without a key.
  const { id, key } = await catalog.createKey(user.id, [...SCOPES]);
  await catalog.revokeKeysOfUserExcept(user.id, id);
  return { user, key, created };
}

/** Gives the demo user a watchlist of the 10 largest companies once a snapshot names them. */
export async function ensureDemoWatchlist(catalog: Catalog, userId: string, companies: Company[]): Promise<void> {
  if (catalog.watchlistsOf(userId).length > 0 || companies.length === 0) return;
  const top = [...companies]
    .sort((a, b) => (b.marketCap ?? 0) - (a.marketCap ?? 0) || (a.ticker < b.ticker ? -1 : 1))
    .slice(0, 10);
  await catalog.createWatchlist(userId, {
    name: "Demo watchlist",
    description: "The ten largest companies by market cap",
    private: true,
    tickers: top.map((c) => c.ticker),
  });
}
