// The catalog's writes, one body of SQL for both stores (DuckDB and PostgreSQL take the same
// statements with positional parameters). Each runs in one transaction of the implementation's
// `tx`, which returns once this process's mirror shows the write.
import type { PortfolioRules } from "../../types.ts";
import { generateKey, hashKey, keyHint } from "./api-keys.ts";
import { CatalogError } from "./errors.ts";
import { MirrorReads } from "./mirror.ts";
import { PosBinds, type SqlTx } from "./sql.ts";
import type { Scope, User, UserPortfolio, Watchlist } from "./types.ts";
import { MAX_OWNED, SCOPES } from "./types.ts";

export abstract class SqlCatalog extends MirrorReads {
  /** Runs `fn` in one transaction; resolves after the commit, with the mirror showing it. */
  abstract sqlTx<T>(fn: (q: SqlTx) => Promise<T>): Promise<T>;

  async createUser(u: Omit<User, "id">): Promise<User> {
    if (this.userByEmail(u.email)) throw new CatalogError("conflict", `a user with email ${u.email} exists`);
    const id = await this.sqlTx(async (q) => {
      const [{ id }] = await q.rows<{ id: bigint | string }>("select nextval('seq_user') id");
      await q.run("insert into users values ($1, $2, $3, $4, $5, now())", [
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
    const other = patch.email === undefined ? null : this.userByEmail(patch.email);
    if (other && other.id !== id) throw new CatalogError("conflict", `a user with email ${patch.email} exists`);
    const cols: Record<string, string | undefined> = {
      email: patch.email,
      first_name: patch.firstName,
      last_name: patch.lastName,
      phone: patch.phoneNumber,
    };
    // column names from the fixed list above; the values bound
    const b = new PosBinds();
    const sets = Object.entries(cols)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${k} = ${b.v(v!)}`);
    if (sets.length)
      await this.sqlTx((q) => q.run(`update users set ${sets.join(", ")} where id = ${b.v(id)}`, b.params));
    return this.getUser(id)!;
  }

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
    await this.sqlTx((q) =>
      q.run("insert into api_keys values ($1, $2, $3, $4, $5, now(), null)", [
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
    await this.sqlTx((q) => q.run("update api_keys set revoked_at = now() where id = $1 and revoked_at is null", [id]));
  }

  /** Revokes every active key of `userId` except `keepId`, in one statement; returns how many. */
  async revokeKeysOfUserExcept(userId: string, keepId: string): Promise<number> {
    const gone = this.mirror.keys.filter((k) => k.userId === userId && k.id !== keepId && !k.revokedAt).length;
    if (gone === 0) return 0;
    await this.sqlTx((q) =>
      q.run("update api_keys set revoked_at = now() where user_id = $1 and id <> $2 and revoked_at is null", [
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
    const id = await this.sqlTx(async (q) => {
      // Counted inside the transaction. The DuckDB file takes one transaction at a time; on
      // PostgreSQL a trigger counts under a row lock as well (two replicas racing cannot pass it).
      await withinLimit(q, "select count(*) n from watchlists where owner_id = $1", ownerId, "watchlists");
      const [{ id }] = await q.rows<{ id: bigint | string }>("select nextval('seq_watchlist') id");
      await q.run("insert into watchlists values ($1, $2, $3, $4, $5, now())", [
        String(id),
        ownerId,
        w.name,
        w.description ?? "",
        w.private ?? true,
      ]);
      await insertItems(q, String(id), [...new Set((w.tickers ?? []).map((t) => t.toUpperCase()))], 0);
      return String(id);
    });
    return this.watchlist(id)!;
  }

  async updateWatchlist(
    id: string,
    patch: { name?: string; description?: string; private?: boolean },
  ): Promise<Watchlist> {
    const b = new PosBinds();
    const sets = [
      patch.name !== undefined && `name = ${b.v(patch.name)}`,
      patch.description !== undefined && `description = ${b.v(patch.description)}`,
      patch.private !== undefined && `private = ${b.v(patch.private)}`,
    ].filter(Boolean);
    if (sets.length)
      await this.sqlTx((q) => q.run(`update watchlists set ${sets.join(", ")} where id = ${b.v(id)}`, b.params));
    return this.watchlist(id)!;
  }

  async deleteWatchlist(id: string): Promise<void> {
    await this.sqlTx(async (q) => {
      await q.run("delete from watchlist_items where watchlist_id = $1", [id]);
      await q.run("delete from watchlists where id = $1", [id]);
    });
  }

  /** Adds tickers not yet present (upper-cased); validation of the tickers is the caller's. */
  async addToWatchlist(id: string, tickers: string[]): Promise<Watchlist> {
    const w = this.watchlist(id);
    if (!w) throw new CatalogError("not_found", `no watchlist ${id}`);
    const wanted = [...new Set(tickers.map((t) => t.toUpperCase()))];
    if (wanted.some((t) => !w.tickers.includes(t)))
      await this.sqlTx(async (q) => {
        // The items as stored now (another process may have added some), under the watchlist's lock.
        await q.exclusive(`watchlist:${id}`);
        const have = await q.rows<{ ticker: string; position: number }>(
          "select ticker, position from watchlist_items where watchlist_id = $1",
          [id],
        );
        const known = new Set(have.map((r) => r.ticker));
        const start = Math.max(-1, ...have.map((r) => Number(r.position))) + 1;
        await insertItems(
          q,
          id,
          wanted.filter((t) => !known.has(t)),
          start,
        );
      });
    return this.watchlist(id)!;
  }

  async removeFromWatchlist(id: string, tickers: string[]): Promise<Watchlist> {
    const b = new PosBinds();
    const sql =
      `delete from watchlist_items where watchlist_id = ${b.v(id)} and ticker in ` +
      `(${b.each(tickers.map((t) => t.toUpperCase()))})`;
    if (tickers.length) await this.sqlTx((q) => q.run(sql, b.params));
    return this.watchlist(id)!;
  }

  async createUserPortfolio(ownerId: string, rules: Omit<PortfolioRules, "id">): Promise<UserPortfolio> {
    const id = await this.sqlTx(async (q) => {
      await withinLimit(q, "select count(*) n from user_portfolios where owner_id = $1", ownerId, "portfolios");
      const [{ id }] = await q.rows<{ id: bigint | string }>("select nextval('seq_portfolio') id");
      await q.run("insert into user_portfolios values ($1, $2, now(), now(), $3)", [
        String(id),
        ownerId,
        JSON.stringify({ ...rules, id: String(id) }),
      ]);
      return String(id);
    });
    return this.userPortfolio(id)!;
  }

  async updateUserPortfolio(id: string, rules: PortfolioRules): Promise<UserPortfolio> {
    await this.sqlTx((q) =>
      q.run("update user_portfolios set rules = $1, updated_at = now() where id = $2", [
        JSON.stringify({ ...rules, id }),
        id,
      ]),
    );
    return this.userPortfolio(id)!;
  }

  async deleteUserPortfolio(id: string): Promise<void> {
    await this.sqlTx(async (q) => {
      await q.run("delete from user_portfolios where id = $1", [id]);
      await q.run("delete from rebalance_failures where portfolio_id = $1", [id]);
    });
  }

  /**
   * Records that the rebalance asked for at `requestedAt` (the portfolio's change time when the
   * job was requested) failed for good: the portfolio reads FAILED until its next change or a run
   * that publishes it. Nothing is recorded for a portfolio deleted meanwhile.
   */
  async recordRebalanceFailure(id: string, requestedAt: string | null, reason: string): Promise<void> {
    await this.sqlTx(async (q) => {
      await q.run("delete from rebalance_failures where portfolio_id = $1", [id]);
      await q.run(
        "insert into rebalance_failures select id, $1::varchar::timestamptz, now(), $2::varchar from " +
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

  /** `assignIds` for several kinds in one transaction. */
  async assignIdsOfKinds<K extends string>(byKind: Record<K, string[]>): Promise<Record<K, Map<string, number>>> {
    return this.sqlTx(async (q) => {
      await q.exclusive("id_map"); // two workers assigning at once would give one id twice
      const out = {} as Record<K, Map<string, number>>;
      for (const kind of Object.keys(byKind) as K[]) {
        const known = new Map(
          (await q.rows<{ name: string; id: number }>("select name, id from id_map where kind = $1", [kind])).map(
            (r) => [r.name, Number(r.id)],
          ),
        );
        let next = Math.max(0, ...known.values()) + 1;
        const fresh = [...new Set(byKind[kind])].filter((n) => !known.has(n)).sort();
        if (fresh.length) {
          const b = new PosBinds();
          const values = fresh.map((n) => {
            known.set(n, next);
            return `(${b.v(kind)}, ${b.v(n)}, ${b.v(next++)})`;
          });
          await q.run(`insert into id_map values ${values.join(", ")}`, b.params);
        }
        out[kind] = known;
      }
      return out;
    });
  }
}

async function insertItems(q: SqlTx, id: string, tickers: string[], start: number) {
  if (!tickers.length) return;
  const b = new PosBinds();
  const values = tickers.map((t, i) => `(${b.v(id)}, ${b.v(t.toUpperCase())}, ${b.v(start + i)}, now())`);
  await q.run(`insert into watchlist_items values ${values.join(", ")}`, b.params);
}

/** Refuses (CatalogError "limit") when the owner already holds MAX_OWNED rows of `what` (`countSql`: $1 the owner). */
async function withinLimit(q: SqlTx, countSql: string, ownerId: string, what: string): Promise<void> {
  const [{ n }] = await q.rows<{ n: unknown }>(countSql, [ownerId]);
  if (Number(n) >= MAX_OWNED) throw new CatalogError("limit", `a user may hold at most ${MAX_OWNED} ${what}`);
}
