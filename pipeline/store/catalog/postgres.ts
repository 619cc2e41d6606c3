// The PostgreSQL catalog, for deployments of several hosts. Reads stay synchronous, from the
// in-memory mirror (loaded at start); every write transaction adds one to catalog_version and
// sends NOTIFY catalog with it, and each replica LISTENs and reloads its mirror when a newer
// version is announced — no polling. A write returns once this process's mirror shows it.
// PostgreSQL unreachable: reads keep serving the mirror, writes throw CatalogUnavailable (503).
import pg from "pg";
import { CatalogError, CatalogUnavailable } from "./errors.ts";
import { loadMirror } from "./mirror.ts";
import { migrate } from "./pg-migrations.ts";
import type { SqlTx, SqlValue } from "./sql.ts";
import type { CatalogPort } from "./types.ts";
import { SqlCatalog } from "./writes.ts";

const CHANNEL = "catalog";
/** How long a connection attempt may take before the store counts as unreachable. */
const CONNECT_TIMEOUT_MS = 3000;
/**
 * How long one catalog statement may wait for its answer. A server cut off the network sends no
 * reset: without a bound a write would wait for TCP to give up (minutes), past every request's limit,
 * instead of answering 503 at once. Catalog statements are small; 3 s is far beyond any of them.
 */
const QUERY_TIMEOUT_MS = 3000;

const sqlOf = (client: pg.PoolClient): SqlTx => ({
  run: async (sql: string, params?: SqlValue[]) => {
    await client.query(sql, params);
  },
  rows: async <T>(sql: string, params?: SqlValue[]) => (await client.query(sql, params)).rows as T[],
  exclusive: async (name: string) => {
    await client.query("select pg_advisory_xact_lock(hashtext($1))", [name]);
  },
});

/** node-postgres' messages for a connection lost or never made. */
const DROPPED = new RegExp(
  "Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|" +
    "Query read timeout",
  "i",
);

/** Whether `e` says the server could not be reached or went away (as opposed to refusing the statement). */
export function isUnreachable(e: unknown): boolean {
  const code = String((e as { code?: unknown })?.code ?? "");
  if (/^(08|57P0[123])/.test(code)) return true; // connection exception; shutdown; cannot connect now
  if (/^E(CONNREFUSED|CONNRESET|TIMEDOUT|HOSTUNREACH|NETUNREACH|NOTFOUND|PIPE|AI_AGAIN)$/.test(code)) return true;
  return DROPPED.test(String((e as Error)?.message));
}

/** A refused statement as the catalog's own error; an unreachable server as CatalogUnavailable. */
function typed(e: unknown): unknown {
  if (isUnreachable(e)) return new CatalogUnavailable(e);
  const err = e as { code?: string; constraint?: string; message?: string };
  if (err.code === "23514" && err.constraint === "owned_cap") return new CatalogError("limit", String(err.message));
  if (err.code === "23505" && err.constraint === "users_email_key")
    return new CatalogError("conflict", "a user with this email exists");
  if (err.code === "23505") return new CatalogError("conflict", `already exists (${err.constraint})`);
  return e;
}

/** A connection whose statement went unanswered is not given out again (true: the pool ends it). */
const discard = (e: unknown): boolean => e !== undefined && isUnreachable(e);

export class PgCatalog extends SqlCatalog implements CatalogPort {
  readonly kind = "postgres" as const;
  /** catalog_version of the mirror. */
  private version = -1;
  private listener: pg.Client | null = null;
  private closed = false;
  private open = new Set<Promise<unknown>>();
  private queued: Promise<void> | null = null;
  private running: Promise<void> = Promise.resolve();

  private constructor(
    readonly path: string,
    private readonly pool: pg.Pool,
  ) {
    super();
  }

  /** Connects, applies missing migrations (under the advisory lock), LISTENs, and loads the mirror. */
  static async open(url: string, opts: { poolSize?: number } = {}): Promise<PgCatalog> {
    const pool = new pg.Pool({
      connectionString: url,
      max: opts.poolSize ?? 8,
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      query_timeout: QUERY_TIMEOUT_MS,
      keepAlive: true,
    });
    // A lost connection is reported by the query that needs it; as an event (an idle client, or a
    // checked-out one between two queries) it would end the process.
    pool.on("error", () => undefined);
    pool.on("connect", (client) => client.on("error", () => undefined));
    const c = new PgCatalog(url, pool);
    try {
      const client = await pool.connect();
      try {
        await migrate(client);
      } finally {
        client.release();
      }
      await c.listen();
      await c.reload();
    } catch (e) {
      await c.close();
      throw typed(e);
    }
    return c;
  }

  /** The dedicated LISTEN connection; when it drops, it reconnects and reloads (notifications may have been missed). */
  private async listen(): Promise<void> {
    const client = new pg.Client({ connectionString: this.path, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
    client.on("notification", (n) => {
      if (n.channel === CHANNEL && Number(n.payload) > this.version) this.reload().catch(() => undefined);
    });
    client.on("error", () => undefined);
    client.on("end", () => {
      if (this.listener === client) this.listener = null;
      if (!this.closed) this.relisten(1000);
    });
    await client.connect();
    await client.query(`listen ${CHANNEL}`);
    this.listener = client;
  }

  private relisten(delayMs: number): void {
    setTimeout(() => {
      if (this.closed) return;
      this.listen()
        .then(() => this.reload())
        .catch(() => this.relisten(Math.min(delayMs * 2, 10_000)));
    }, delayMs).unref();
  }

  /** A reload of the mirror that starts after this call (joining one queued and not yet started). */
  private reload(): Promise<void> {
    if (this.queued) return this.queued;
    const p: Promise<void> = this.running
      .catch(() => undefined)
      .then(() => {
        if (this.queued === p) this.queued = null;
        return this.loadNow();
      });
    this.queued = p;
    this.running = p;
    return p;
  }

  /** Every table and the version, in one snapshot. */
  private async loadNow(): Promise<void> {
    const client = await this.pool.connect();
    let failed: unknown;
    try {
      await client.query("begin isolation level repeatable read read only");
      const [{ v }] = (await client.query<{ v: string }>("select v from catalog_version")).rows;
      const m = await loadMirror(sqlOf(client));
      await client.query("commit");
      if (Number(v) >= this.version) {
        this.setMirror(m);
        this.version = Number(v);
      }
    } catch (e) {
      // unanswered: the rollback would wait as long; the server rolls back when the pool ends it
      if (!discard(e)) await client.query("rollback").catch(() => undefined);
      failed = e;
      throw e;
    } finally {
      client.release(discard(failed));
    }
  }

  async sqlTx<T>(fn: (q: SqlTx) => Promise<T>): Promise<T> {
    const p = this.write(fn);
    this.open.add(p);
    try {
      return await p;
    } catch (e) {
      throw typed(e);
    } finally {
      this.open.delete(p);
    }
  }

  private async write<T>(fn: (q: SqlTx) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let out: T;
    let failed: unknown;
    try {
      await client.query("begin");
      out = await fn(sqlOf(client));
      // Last, so the one-row version is locked only for the commit.
      const [{ v }] = (await client.query<{ v: string }>("update catalog_version set v = v + 1 returning v")).rows;
      await client.query("select pg_notify($1, $2)", [CHANNEL, String(v)]);
      await client.query("commit");
    } catch (e) {
      // unanswered: the rollback would wait as long; the server rolls back when the pool ends it
      if (!discard(e)) await client.query("rollback").catch(() => undefined);
      failed = e;
      throw e;
    } finally {
      client.release(discard(failed));
    }
    await this.reload();
    return out;
  }

  /**
   * Reloads when the stored version moved (one query): for a worker about to read what an API
   * replica just wrote, before its notification has arrived. Unreachable: false, the mirror serves.
   */
  async refresh(): Promise<boolean> {
    try {
      const { rows } = await this.pool.query<{ v: string }>("select v from catalog_version");
      if (Number(rows[0].v) === this.version) return false;
      await this.reload();
      return true;
    } catch (e) {
      if (isUnreachable(e)) return false;
      throw e;
    }
  }

  async idle(): Promise<void> {
    while (this.open.size > 0) await Promise.allSettled([...this.open]);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.idle();
    await this.running.catch(() => undefined);
    const l = this.listener;
    this.listener = null;
    await l?.end().catch(() => undefined);
    await this.pool.end().catch(() => undefined);
  }
}
