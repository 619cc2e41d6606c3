// The catalog: a DuckDB file opened only for the length of one transaction, so a server, the
// CLI and workers can all use it; reads are served from an in-memory mirror that is reloaded
// whenever another process has written (a version file says so).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { PortfolioRules } from "../../types.ts";
import type {
  ApiKeyInfo,
  CatalogReader,
  CatalogWriter,
  RebalanceFailure,
  Scope,
  User,
  UserPortfolio,
  Watchlist,
} from "../catalog-types.ts";
import { MAX_OWNED, SCOPES } from "../catalog-types.ts";
import { Binds, type Conn, openDuck, rows, scalar } from "../duck.ts";
import { generateKey, hashKey, keyHint } from "./keys.ts";
import { CATALOG_SCHEMA } from "./schema.ts";

export class CatalogError extends Error {
  constructor(
    /** `limit`: a per-user limit (MAX_OWNED) would be exceeded; nothing was written */
    readonly code: "not_found" | "conflict" | "invalid" | "limit",
    message: string,
  ) {
    super(message);
    this.name = "CatalogError";
  }
}

interface Mirror {
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
const iso = (v: unknown) =>
  v instanceof Date ? v.toISOString() : v == null ? null : new Date(String(v)).toISOString();

/**
 * The transactions of this process on each catalog file, one after another. DuckDB's lock on the
 * file is a POSIX record lock, which is held per process: it keeps other processes out, but a
 * second open of the file in this process succeeds. Two transactions of one process at once (two
 * Catalogs on one file, as a worker and a server in one process, or two writes through one) read
 * and write beside each other: a reload could miss the other's commit and then overwrite its
 * version file, so the mirror stayed stale for good (a failed rebalance read PENDING forever).
 */
const turns = new Map<string, Promise<unknown>>();

const emptyMirror = (): Mirror => ({
  users: new Map(),
  keysByHash: new Map(),
  keyHashes: new Set(),
  keys: [],
  watchlists: new Map(),
  portfolios: new Map(),
  changedAt: new Map(),
  failures: new Map(),
});

export class Catalog implements CatalogReader, CatalogWriter {
  private mirror: Mirror = emptyMirror();
  private authMemo = new Map<string, { user: User; key: ApiKeyInfo } | null>();
  private version = "";
  private constructor(readonly path: string) {}

  static async open(path: string): Promise<Catalog> {
    mkdirSync(dirname(path), { recursive: true });
    const c = new Catalog(path);
    await c.tx(async (conn) => conn.run(CATALOG_SCHEMA));
    return c;
  }

  private get versionFile() {
    return `${this.path}.version`;
  }

  private open = new Set<Promise<unknown>>();

  /** Runs `fn` in one transaction on the file, retrying while another process holds it. */
  async tx<T>(fn: (conn: Conn) => Promise<T>): Promise<T> {
    const p = this.runTx(fn);
    this.open.add(p);
    try {
      return await p;
    } finally {
      this.open.delete(p);
    }
  }

  /** Resolves once no transaction is open: the DuckDB file is closed after each one (shutdown waits for this). */
  async idle(): Promise<void> {
    while (this.open.size > 0) await Promise.allSettled([...this.open]);
  }

  private async runTx<T>(fn: (conn: Conn) => Promise<T>): Promise<T> {
    const key = resolve(this.path);
    const mine = (turns.get(key) ?? Promise.resolve()).catch(() => undefined).then(() => this.runTxAlone(fn));
    turns.set(key, mine);
    try {
      return await mine;
    } finally {
      if (turns.get(key) === mine) turns.delete(key);
    }
  }

  private async runTxAlone<T>(fn: (conn: Conn) => Promise<T>): Promise<T> {
    let db: Awaited<ReturnType<typeof openDuck>> | undefined;
    // Another opener holds the file for one transaction or read at a time. On a loaded machine a
    // writer could lose all of 100 tries 50 ms apart (5 s) to readers polling the file, and a
    // worker's record of a failed rebalance is then lost: it keeps trying for 30 s, at jittered
    // intervals so that it does not fall into step with a poller.
    for (const until = Date.now() + 30_000; ; ) {
      try {
        db = await openDuck(this.path, { threads: "1" });
        break;
      } catch (e) {
        if (Date.now() > until || !/lock/i.test(String((e as Error).message))) throw e;
        await sleep(20 + Math.random() * 60);
      }
    }
    try {
      await db.conn.run("begin transaction");
      const out = await fn(db.conn);
      await db.conn.run("commit");
      await this.load(db.conn);
      writeFileSync(this.versionFile, this.version);
      return out;
    } catch (e) {
      await db.conn.run("rollback").catch(() => undefined);
      throw e;
    } finally {
      db.close();
    }
  }

  /** Reloads the mirror when another process wrote since; cheap enough to call per auth miss. */
  async refresh(): Promise<boolean> {
    const v = existsSync(this.versionFile) ? readFileSync(this.versionFile, "utf8") : "";
    if (v === this.version) return false;
    await this.tx(async () => undefined);
    return true;
  }

  private async load(conn: Conn): Promise<void> {
    const users = await rows<Record<string, string>>(conn, "select * from users");
    const keys = await rows<Record<string, unknown>>(conn, "select * from api_keys order by created_at, id");
    const wls = await rows<Record<string, unknown>>(conn, "select * from watchlists");
    const items = await rows<{ watchlist_id: string; ticker: string }>(
      conn,
      "select watchlist_id, ticker from watchlist_items order by watchlist_id, position",
    );
    const ups = await rows<Record<string, unknown>>(conn, "select * from user_portfolios");
    const fails = await rows<Record<string, unknown>>(conn, "select * from rebalance_failures");
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
    this.mirror = m;
    this.authMemo = new Map();
    this.version = `${Date.now()}-${Math.random().toString(36).slice(2)}`;
  }

  // ---- reads (memory)
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
  listKeys(): ApiKeyInfo[] {
    return this.mirror.keys;
  }
  watchlistsOf(userId: string) {
    return [...this.mirror.watchlists.values()]
      .filter((w) => w.ownerId === userId)
      .sort((a, b) => Number(a.id) - Number(b.id));
  }
  watchlist(id: string) {
    return this.mirror.watchlists.get(id) ?? null;
  }
  userPortfoliosOf(userId: string) {
    return [...this.mirror.portfolios.values()]
      .filter((p) => p.ownerId === userId)
      .sort((a, b) => Number(a.id) - Number(b.id));
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

  // ---- writes
  async createUser(u: Omit<User, "id">): Promise<User> {
    if (this.userByEmail(u.email)) throw new CatalogError("conflict", `a user with email ${u.email} exists`);
    const id = await this.tx(async (conn) => {
      const [{ id }] = await rows<{ id: bigint }>(conn, "select nextval('seq_user') id");
      await conn.run("insert into users values ($1, $2, $3, $4, $5, now())", [
        String(id),
        u.email,
        u.firstName,
        u.lastName,
        u.phoneNumber,
      ]);
      return String(id);
    });
    return this.getUser(id)!;
  }

  async updateUser(id: string, patch: Partial<Omit<User, "id">>): Promise<User> {
    if (!this.getUser(id)) throw new CatalogError("not_found", `no user ${id}`);
    if (patch.email !== undefined && this.userByEmail(patch.email) && this.userByEmail(patch.email)!.id !== id)
      throw new CatalogError("conflict", `a user with email ${patch.email} exists`);
    const cols: Record<string, string | undefined> = {
      email: patch.email,
      first_name: patch.firstName,
      last_name: patch.lastName,
      phone: patch.phoneNumber,
    };
    // column names from the fixed list above; the values bound
    const b = new Binds();
    const sets = Object.entries(cols)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${k} = ${b.v(v!)}`);
    if (sets.length)
      await this.tx((conn) => conn.run(`update users set ${sets.join(", ")} where id = ${b.v(id)}`, b.params));
    return this.getUser(id)!;
  }

  /** Creates a key; the plain key is returned here once and never stored. `fixedKey` is for DEMO_API_KEY. */
  async createKey(
    userId: string,
    scopes: string[],
    fixedKey?: string,
  ): Promise<{ id: string; key: string; scopes: Scope[] }> {
    if (!this.getUser(userId)) throw new CatalogError("not_found", `no user ${userId}`);
    const bad = scopes.filter((s) => !(SCOPES as readonly string[]).includes(s));
    if (bad.length)
      throw new CatalogError("invalid", `unknown scope(s): ${bad.join(", ")}; known: ${SCOPES.join(", ")}`);
    const key = fixedKey ?? generateKey();
    const id = `key_${hashKey(key).slice(0, 12)}`;
    const unique = [...new Set(scopes)] as Scope[];
    await this.tx((conn) =>
      conn.run("insert into api_keys values ($1, $2, $3, $4, $5, now(), null)", [
        id,
        userId,
        hashKey(key),
        keyHint(key),
        unique.join(","),
      ]),
    );
    return { id, key, scopes: unique };
  }

  async revokeKey(id: string): Promise<void> {
    if (!this.mirror.keys.some((k) => k.id === id)) throw new CatalogError("not_found", `no key ${id}`);
    await this.tx((conn) =>
      conn.run("update api_keys set revoked_at = now() where id = $1 and revoked_at is null", [id]),
    );
  }

  /** Revokes every active key of `userId` except `keepId`, in one statement; returns how many. */
  async revokeKeysOfUserExcept(userId: string, keepId: string): Promise<number> {
    const gone = this.mirror.keys.filter((k) => k.userId === userId && k.id !== keepId && !k.revokedAt).length;
    if (gone === 0) return 0;
    await this.tx((conn) =>
      conn.run("update api_keys set revoked_at = now() where user_id = $1 and id <> $2 and revoked_at is null", [
        userId,
        keepId,
      ]),
    );
    return gone;
  }

  async createWatchlist(
    ownerId: string,
    w: { name: string; description?: string; private?: boolean; tickers?: string[] },
  ): Promise<Watchlist> {
    const id = await this.tx(async (conn) => {
      // counted inside the transaction (one at a time on the file): concurrent creates cannot pass the limit
      await withinLimit(conn, "select count(*) from watchlists where owner_id = $1", ownerId, "watchlists");
      const [{ id }] = await rows<{ id: bigint }>(conn, "select nextval('seq_watchlist') id");
      await conn.run("insert into watchlists values ($1, $2, $3, $4, $5, now())", [
        String(id),
        ownerId,
        w.name,
        w.description ?? "",
        w.private ?? true,
      ]);
      await insertItems(conn, String(id), w.tickers ?? [], 0);
      return String(id);
    });
    return this.watchlist(id)!;
  }

  async updateWatchlist(
    id: string,
    patch: { name?: string; description?: string; private?: boolean },
  ): Promise<Watchlist> {
    const b = new Binds();
    const sets = [
      patch.name !== undefined && `name = ${b.v(patch.name)}`,
      patch.description !== undefined && `description = ${b.v(patch.description)}`,
      patch.private !== undefined && `private = ${b.v(patch.private)}`,
    ].filter(Boolean);
    if (sets.length)
      await this.tx((conn) => conn.run(`update watchlists set ${sets.join(", ")} where id = ${b.v(id)}`, b.params));
    return this.watchlist(id)!;
  }

  async deleteWatchlist(id: string): Promise<void> {
    await this.tx(async (conn) => {
      await conn.run("delete from watchlist_items where watchlist_id = $1", [id]);
      await conn.run("delete from watchlists where id = $1", [id]);
    });
  }

  /** Adds tickers not yet present (upper-cased); validation of the tickers is the caller's. */
  async addToWatchlist(id: string, tickers: string[]): Promise<Watchlist> {
    const w = this.watchlist(id);
    if (!w) throw new CatalogError("not_found", `no watchlist ${id}`);
    const fresh = [...new Set(tickers.map((t) => t.toUpperCase()))].filter((t) => !w.tickers.includes(t));
    if (fresh.length) await this.tx((conn) => insertItems(conn, id, fresh, w.tickers.length));
    return this.watchlist(id)!;
  }

  async removeFromWatchlist(id: string, tickers: string[]): Promise<Watchlist> {
    const b = new Binds();
    const sql =
      `delete from watchlist_items where watchlist_id = ${b.v(id)} and ticker in ` +
      `(${b.each(tickers.map((t) => t.toUpperCase()))})`;
    if (tickers.length) await this.tx((conn) => conn.run(sql, b.params));
    return this.watchlist(id)!;
  }

  async createUserPortfolio(ownerId: string, rules: Omit<PortfolioRules, "id">): Promise<UserPortfolio> {
    const id = await this.tx(async (conn) => {
      await withinLimit(conn, "select count(*) from user_portfolios where owner_id = $1", ownerId, "portfolios");
      const [{ id }] = await rows<{ id: bigint }>(conn, "select nextval('seq_portfolio') id");
      await conn.run("insert into user_portfolios values ($1, $2, now(), now(), $3)", [
        String(id),
        ownerId,
        JSON.stringify({ ...rules, id: String(id) }),
      ]);
      return String(id);
    });
    return this.userPortfolio(id)!;
  }

  async updateUserPortfolio(id: string, rules: PortfolioRules): Promise<UserPortfolio> {
    await this.tx((conn) =>
      conn.run("update user_portfolios set rules = $1, updated_at = now() where id = $2", [
        JSON.stringify({ ...rules, id }),
        id,
      ]),
    );
    return this.userPortfolio(id)!;
  }

  async deleteUserPortfolio(id: string): Promise<void> {
    await this.tx(async (conn) => {
      await conn.run("delete from user_portfolios where id = $1", [id]);
      await conn.run("delete from rebalance_failures where portfolio_id = $1", [id]);
    });
  }

  /**
   * Records that the rebalance asked for at `requestedAt` (the portfolio's change time when the
   * job was requested) failed for good: the portfolio reads FAILED until its next change or a run
   * that publishes it. Nothing is recorded for a portfolio deleted meanwhile.
   */
  async recordRebalanceFailure(id: string, requestedAt: string | null, reason: string): Promise<void> {
    await this.tx(async (conn) => {
      await conn.run("delete from rebalance_failures where portfolio_id = $1", [id]);
      await conn.run(
        "insert into rebalance_failures select id, $1::varchar::timestamptz, now(), $2 from " +
          "user_portfolios where id = $3",
        [requestedAt, reason.slice(0, 2000), id],
      );
    });
  }

  /**
   * Stable integer ids for names (companies without a source id, sectors, industries):
   * a name keeps the id it was first given, across runs and sources.
   */
  async assignIds(kind: string, names: string[]): Promise<Map<string, number>> {
    return (await this.assignIdsOfKinds({ [kind]: names }))[kind];
  }

  /** `assignIds` for several kinds in one transaction (each opens and closes the file). */
  async assignIdsOfKinds<K extends string>(byKind: Record<K, string[]>): Promise<Record<K, Map<string, number>>> {
    return this.tx(async (conn) => {
      const out = {} as Record<K, Map<string, number>>;
      for (const kind of Object.keys(byKind) as K[]) {
        const known = new Map(
          (await rows<{ name: string; id: number }>(conn, "select name, id from id_map where kind = $1", [kind])).map(
            (r) => [r.name, Number(r.id)],
          ),
        );
        let next = Math.max(0, ...known.values()) + 1;
        const fresh = [...new Set(byKind[kind])].filter((n) => !known.has(n)).sort();
        if (fresh.length) {
          const b = new Binds();
          const values = fresh.map((n) => {
            known.set(n, next);
            return `(${b.v(kind)}, ${b.v(n)}, ${b.v(next++)})`;
          });
          await conn.run(`insert into id_map values ${values.join(", ")}`, b.params);
        }
        out[kind] = known;
      }
      return out;
    });
  }
}

async function insertItems(conn: Conn, id: string, tickers: string[], start: number) {
  if (!tickers.length) return;
  const b = new Binds();
  const values = tickers.map((t, i) => `(${b.v(id)}, ${b.v(t.toUpperCase())}, ${b.v(start + i)}, now())`);
  await conn.run(`insert into watchlist_items values ${values.join(", ")}`, b.params);
}

/** Refuses (CatalogError "limit") when the owner already holds MAX_OWNED rows of `what` (`countSql`: $1 the owner). */
async function withinLimit(conn: Conn, countSql: string, ownerId: string, what: string): Promise<void> {
  if (Number(await scalar(conn, countSql, [ownerId])) >= MAX_OWNED)
    throw new CatalogError("limit", `a user may hold at most ${MAX_OWNED} ${what}`);
}
