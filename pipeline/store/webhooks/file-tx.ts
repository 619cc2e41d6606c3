// One transaction at a time on a DuckDB file shared by processes (the server, workers, CLIs):
// the file is open only for the transaction, and a process waits while another holds it.
// Within a process, transactions on one path take turns: DuckDB's file lock is per process, so
// two opens in one process would not keep each other out.
import { chmodSync, existsSync } from "node:fs";
import { resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { type Conn, openDuck } from "../duck/duck.ts";

const turns = new Map<string, Promise<unknown>>();

/** Runs `fn` in one transaction on `path` (created with mode 0600: it holds shared secrets). */
export async function fileTx<T>(path: string, fn: (conn: Conn) => Promise<T>): Promise<T> {
  const key = resolve(path);
  const mine = (turns.get(key) ?? Promise.resolve()).catch(() => undefined).then(() => alone(key, fn));
  turns.set(key, mine);
  try {
    return await mine;
  } finally {
    if (turns.get(key) === mine) turns.delete(key);
  }
}

async function alone<T>(path: string, fn: (conn: Conn) => Promise<T>): Promise<T> {
  const fresh = !existsSync(path);
  let db: Awaited<ReturnType<typeof openDuck>> | undefined;
  // jittered retries for 30 s, as the catalog does, so a writer does not fall into step with a poller
  for (const until = Date.now() + 30_000; ; ) {
    try {
      db = await openDuck(path, { threads: "1" });
      break;
    } catch (e) {
      if (Date.now() > until || !/lock/i.test(String((e as Error).message))) throw e;
      await sleep(20 + Math.random() * 60);
    }
  }
  if (fresh) chmodSync(path, 0o600);
  try {
    await db.conn.run("begin transaction");
    const out = await fn(db.conn);
    await db.conn.run("commit");
    return out;
  } catch (e) {
    await db.conn.run("rollback").catch(() => undefined);
    throw e;
  } finally {
    db.close();
  }
}
