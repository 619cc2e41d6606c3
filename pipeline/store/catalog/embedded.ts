// The embedded catalog: a DuckDB file opened only for the length of one transaction, so a server,
// the CLI and workers on one host can all use it; reads are served from the in-memory mirror,
// reloaded whenever another process has written (a version file beside the catalog says so).
// DuckDB's file lock does not hold across hosts: several hosts use the PostgreSQL catalog.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type Conn, openDuck, rows } from "../duck/duck.ts";
import { loadMirror } from "./mirror.ts";
import { CATALOG_SCHEMA } from "./schema.ts";
import type { SqlTx, SqlValue } from "./sql.ts";
import type { CatalogPort } from "./types.ts";
import { SqlCatalog } from "./writes.ts";

/**
 * The transactions of this process on each catalog file, one after another. DuckDB's lock on the
 * file is a POSIX record lock, which is held per process: it keeps other processes out, but a
 * second open of the file in this process succeeds. Two transactions of one process at once (two
 * Catalogs on one file, as a worker and a server in one process, or two writes through one) read
 * and write beside each other: a reload could miss the other's commit and then overwrite its
 * version file, so the mirror stayed stale for good (a failed rebalance read PENDING forever).
 */
const turns = new Map<string, Promise<unknown>>();

/** A DuckDB connection as the shared write code wants it. */
const sqlOf = (conn: Conn): SqlTx => ({
  run: async (sql: string, params?: SqlValue[]) => {
    await conn.run(sql, params?.length ? params : undefined);
  },
  rows: <T>(sql: string, params?: SqlValue[]) => rows<T>(conn, sql, params?.length ? params : undefined),
  exclusive: async () => undefined, // the file admits one transaction at a time
});

export class EmbeddedCatalog extends SqlCatalog implements CatalogPort {
  readonly kind = "embedded" as const;
  private version = "";
  private constructor(readonly path: string) {
    super();
  }

  static async open(path: string): Promise<EmbeddedCatalog> {
    mkdirSync(dirname(path), { recursive: true });
    const c = new EmbeddedCatalog(path);
    await c.tx(async (conn) => conn.run(CATALOG_SCHEMA));
    return c;
  }

  private get versionFile() {
    return `${this.path}.version`;
  }

  private open = new Set<Promise<unknown>>();

  sqlTx<T>(fn: (q: SqlTx) => Promise<T>): Promise<T> {
    return this.tx((conn) => fn(sqlOf(conn)));
  }

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

  close(): Promise<void> {
    return this.idle();
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
      this.setMirror(await loadMirror(sqlOf(db.conn)));
      this.version = `${Date.now()}-${Math.random().toString(36).slice(2)}`;
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
}
