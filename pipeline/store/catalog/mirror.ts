// The catalog's in-memory mirror: every row of the account tables, read in one transaction, and
// the synchronous reads the API serves from it. Both implementations of the port share it; they
// differ only in how they learn that the mirror is stale.
import type { PortfolioRules } from "../../types.ts";
import { hashKey } from "./api-keys.ts";
import type { SqlTx } from "./sql.ts";
import type { ApiKeyInfo, RebalanceFailure, Scope, User, UserPortfolio, Watchlist } from "./types.ts";

export interface Mirror {
  users: Map<string, User>;
  keysByHash: Map<string, ApiKeyInfo>;
  /** Every key's hash, revoked ones too. */
  keyHashes: Set<string>;
  keys: ApiKeyInfo[];
  watchlists: Map<string, Watchlist>;
  portfolios: Map<string, UserPortfolio>;
  /** user portfolio id → its last change (create or update): when its rebalance was requested */
  changedAt: Map<string, string>;
  /** user portfolio id → the last rebalance that failed for good */
  failures: Map<string, RebalanceFailure>;
}

/** Presented keys remembered per mirror (see authenticate). */
const AUTH_MEMO_MAX = 10_000;
export const iso = (v: unknown) =>
  v instanceof Date ? v.toISOString() : v == null ? null : new Date(String(v)).toISOString();

export const emptyMirror = (): Mirror => ({
  users: new Map(),
  keysByHash: new Map(),
  keyHashes: new Set(),
  keys: [],
  watchlists: new Map(),
  portfolios: new Map(),
  changedAt: new Map(),
  failures: new Map(),
});

/** Reads every account table in the transaction `q` (one snapshot) into a fresh mirror. */
export async function loadMirror(q: SqlTx): Promise<Mirror> {
  const users = await q.rows<Record<string, string>>("select * from users");
  const keys = await q.rows("select * from api_keys order by created_at, id");
  const wls = await q.rows("select * from watchlists");
  const items = await q.rows<{ watchlist_id: string; ticker: string }>(
    "select watchlist_id, ticker from watchlist_items order by watchlist_id, position",
  );
  const ups = await q.rows("select * from user_portfolios");
  const fails = await q.rows("select * from rebalance_failures");
  const m = emptyMirror();
  for (const u of users)
    m.users.set(u.id, {
      id: u.id,
      email: u.email,
      firstName: u.first_name,
      lastName: u.last_name,
      phoneNumber: u.phone,
    });
  for (const k of keys) {
    const info: ApiKeyInfo = {
      id: String(k.id),
      userId: String(k.user_id),
      scopes: String(k.scopes).split(",").filter(Boolean) as Scope[],
      createdAt: iso(k.created_at)!,
      revokedAt: iso(k.revoked_at),
    };
    m.keys.push(info);
    m.keyHashes.add(String(k.key_hash));
    if (!info.revokedAt) m.keysByHash.set(String(k.key_hash), info);
  }
  for (const w of wls)
    m.watchlists.set(String(w.id), {
      id: String(w.id),
      ownerId: String(w.owner_id),
      name: String(w.name),
      description: String(w.description),
      private: Boolean(w.private),
      createdAt: iso(w.created_at)!,
      tickers: [],
    });
  for (const it of items) m.watchlists.get(it.watchlist_id)?.tickers.push(it.ticker);
  for (const p of ups) {
    m.portfolios.set(String(p.id), {
      ...(JSON.parse(String(p.rules)) as PortfolioRules),
      id: String(p.id),
      ownerId: String(p.owner_id),
      createdAt: iso(p.created_at)!,
    });
    m.changedAt.set(String(p.id), iso(p.updated_at)!);
  }
  for (const f of fails)
    m.failures.set(String(f.portfolio_id), {
      requestedAt: iso(f.requested_at),
      failedAt: iso(f.failed_at)!,
      reason: String(f.reason),
    });
  return m;
}

const byNumericId = <T extends { id: string }>(a: T, b: T) => Number(a.id) - Number(b.id);

/** The reads of the port, all from the mirror. */
export class MirrorReads {
  protected mirror: Mirror = emptyMirror();
  private authMemo = new Map<string, { user: User; key: ApiKeyInfo } | null>();

  /** Replaces the mirror (and forgets remembered keys: a revoked key stops working now). */
  protected setMirror(m: Mirror): void {
    this.mirror = m;
    this.authMemo = new Map();
  }

  authenticate(presentedKey: string) {
    // Memoised per mirror: hashing every request's key was a measurable part of a cached read.
    // The memo lives in this process's memory only (never on disk, never logged) and is dropped
    // with the mirror, so a revoked key stops working at the next reload.
    const memo = this.authMemo;
    const hit = memo.get(presentedKey);
    if (hit !== undefined) return hit;
    const key = this.mirror.keysByHash.get(hashKey(presentedKey));
    const user = key && this.mirror.users.get(key.userId);
    const found = key && user ? { user, key } : null;
    if (memo.size >= AUTH_MEMO_MAX) memo.clear(); // unknown keys cannot grow it without bound
    memo.set(presentedKey, found);
    return found;
  }
  isKeyHash(sha256Hex: string): boolean {
    return this.mirror.keyHashes.has(sha256Hex);
  }
  getUser(id: string) {
    return this.mirror.users.get(id) ?? null;
  }
  userByEmail(email: string) {
    return [...this.mirror.users.values()].find((u) => u.email.toLowerCase() === email.toLowerCase()) ?? null;
  }
  allUsers(): User[] {
    return [...this.mirror.users.values()].sort(byNumericId);
  }
  listKeys(): ApiKeyInfo[] {
    return this.mirror.keys;
  }
  watchlistsOf(userId: string) {
    return [...this.mirror.watchlists.values()].filter((w) => w.ownerId === userId).sort(byNumericId);
  }
  watchlist(id: string) {
    return this.mirror.watchlists.get(id) ?? null;
  }
  allWatchlists(): Watchlist[] {
    return [...this.mirror.watchlists.values()].sort(byNumericId);
  }
  userPortfoliosOf(userId: string) {
    return [...this.mirror.portfolios.values()].filter((p) => p.ownerId === userId).sort(byNumericId);
  }
  userPortfolio(id: string) {
    return this.mirror.portfolios.get(id) ?? null;
  }
  rebalanceRequestedAt(id: string): string | null {
    return this.mirror.changedAt.get(id) ?? null;
  }
  /** The failure of the rebalance the latest change asked for; null when none (a later change asks again). */
  rebalanceFailure(id: string): RebalanceFailure | null {
    const f = this.mirror.failures.get(id);
    return f && this.mirror.portfolios.has(id) && f.requestedAt === this.rebalanceRequestedAt(id) ? f : null;
  }
  allUserPortfolios(): UserPortfolio[] {
    return [...this.mirror.portfolios.values()];
  }
}
