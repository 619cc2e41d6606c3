// The small mutable catalog: users, API keys, watchlists, user portfolios.
import type { PortfolioRules } from "../../types.ts";

export const SCOPES = [
  "ratings:read",
  "financials:read",
  "analytics:read",
  "portfolios:read",
  "portfolios:write",
  "watchlists:read",
  "watchlists:write",
  "profile:read",
  // Webhook subscriptions and their delivery log (docs/api/webhooks.md)
  "webhooks:read",
  "webhooks:write",
  // Operators: the queue dashboard at /admin/queues (served only when REDIS_URL is set).
  "admin",
] as const;
export type Scope = (typeof SCOPES)[number];

export interface User {
  id: string;
  email: string;
  firstName: string;
  lastName: string;
  phoneNumber: string;
}

export interface ApiKeyInfo {
  id: string;
  userId: string;
  scopes: Scope[];
  createdAt: string;
  revokedAt: string | null;
}

export interface Watchlist {
  id: string;
  ownerId: string;
  name: string;
  description: string;
  private: boolean;
  createdAt: string;
  /** Upper-case tickers in insertion order, no duplicates. */
  tickers: string[];
}

/** A user portfolio's rebalance that failed for good (kept for operators; the API shows only that and when). */
export interface RebalanceFailure {
  /** The change time the failed rebalance was asked for (ISO); the failure applies while it is the latest. */
  requestedAt: string | null;
  failedAt: string;
  reason: string;
}

export interface UserPortfolio extends PortfolioRules {
  ownerId: string;
  createdAt: string;
}

/** What the API needs from the catalog. Reads are served from memory; writes persist first. */
export interface CatalogReader {
  /** Resolve a presented key (plain text) to its user and scopes; null when unknown or revoked. */
  authenticate(presentedKey: string): { user: User; key: ApiKeyInfo } | null;
  /** Whether a SHA-256 hex digest is the hash of a key the store holds, revoked ones too (logs redact those keys). */
  isKeyHash?(sha256Hex: string): boolean;
  getUser(id: string): User | null;
  watchlistsOf(userId: string): Watchlist[];
  watchlist(id: string): Watchlist | null;
  userPortfoliosOf(userId: string): UserPortfolio[];
  userPortfolio(id: string): UserPortfolio | null;
  /** When the latest change of a user portfolio asked for its rebalance (ISO); null when none is recorded. */
  rebalanceRequestedAt?(portfolioId: string): string | null;
  /** The failure of the rebalance the latest change asked for, if it failed for good. */
  rebalanceFailure?(portfolioId: string): RebalanceFailure | null;
}

export interface WatchlistFields {
  name: string;
  description?: string;
  private?: boolean;
}

/** The writes GraphQL mutations make. Each persists before it returns; reads see it at once. */
export interface CatalogWriter {
  updateUser(id: string, patch: Partial<Omit<User, "id">>): Promise<User>;
  createWatchlist(ownerId: string, w: WatchlistFields & { tickers?: string[] }): Promise<Watchlist>;
  updateWatchlist(id: string, patch: Partial<WatchlistFields>): Promise<Watchlist>;
  deleteWatchlist(id: string): Promise<void>;
  /** Adds tickers not yet present (upper-cased), in order. */
  addToWatchlist(id: string, tickers: string[]): Promise<Watchlist>;
  removeFromWatchlist(id: string, tickers: string[]): Promise<Watchlist>;
  /** Also records the time the portfolio's rebalance is requested (rebalanceRequestedAt). */
  createUserPortfolio(ownerId: string, rules: Omit<PortfolioRules, "id">): Promise<UserPortfolio>;
  updateUserPortfolio(id: string, rules: PortfolioRules): Promise<UserPortfolio>;
  deleteUserPortfolio(id: string): Promise<void>;
}

/**
 * A user may hold at most this many watchlists and portfolios (their lists are not paged); the
 * catalog enforces it inside the writing transaction.
 */
export const MAX_OWNED = 200;

/**
 * The catalog port: what the service needs of the account store, whichever holds it (the embedded
 * DuckDB file, pipeline/store/catalog/embedded.ts, or PostgreSQL, pipeline/store/catalog/postgres.ts).
 * Reads are synchronous, from a mirror in this process's memory that each implementation keeps
 * current (a version file beside the DuckDB file; LISTEN/NOTIFY on PostgreSQL); writes persist first
 * and return once this process's mirror shows them.
 */
export interface CatalogPort extends Required<CatalogReader>, CatalogWriter {
  /** Where the catalog lives: the DuckDB file's path or the PostgreSQL URL (a child process opens it again). */
  readonly path: string;
  /** "embedded" or "postgres", for logs and the migration CLI. */
  readonly kind: "embedded" | "postgres";
  userByEmail(email: string): User | null;
  listKeys(): ApiKeyInfo[];
  allUsers(): User[];
  allWatchlists(): Watchlist[];
  allUserPortfolios(): UserPortfolio[];
  createUser(u: Omit<User, "id">): Promise<User>;
  /** Creates a key; the plain key is returned here once and never stored. `fixedKey` is for DEMO_API_KEY. */
  createKey(userId: string, scopes: string[], fixedKey?: string): Promise<{ id: string; key: string; scopes: Scope[] }>;
  revokeKey(id: string): Promise<void>;
  /** Revokes every active key of `userId` except `keepId`; returns how many. */
  revokeKeysOfUserExcept(userId: string, keepId: string): Promise<number>;
  recordRebalanceFailure(id: string, requestedAt: string | null, reason: string): Promise<void>;
  /** Stable integer ids for names: a name keeps the id it was first given, across runs and sources. */
  assignIds(kind: string, names: string[]): Promise<Map<string, number>>;
  assignIdsOfKinds<K extends string>(byKind: Record<K, string[]>): Promise<Record<K, Map<string, number>>>;
  /** Brings the mirror up to date with writes of other processes; true when it changed. */
  refresh(): Promise<boolean>;
  /** Resolves once no write of this process is open. */
  idle(): Promise<void>;
  /** idle(), then lets go of connections (PostgreSQL); the catalog is not used after. */
  close(): Promise<void>;
}
