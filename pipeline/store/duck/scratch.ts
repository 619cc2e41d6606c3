// A partition job's scratch DuckDB. In a worker thread one in-memory database is opened once and
// serves every job the thread runs (opening and closing one per job cost 0.1–0.2 s each); a job
// gets a connection of its own and whatever it created is dropped when it ends. Inline (the main
// thread: tests, PIPELINE_WORKERS=0) each job opens and closes its own, so nothing outlives it,
// unless the process runs such jobs one after another for its life (shareScratchOnMainThread).
import { isMainThread } from "node:worker_threads";
import { type Conn, columns, DuckDBInstance, ident, openDuck } from "./duck.ts";
import { DUCK_MEMORY } from "./duck-memory.ts";

const OPTS = { threads: "1", memory_limit: DUCK_MEMORY.scratch };

let shared: Promise<DuckDBInstance> | null = null;
let sharedOnMain = false;

/**
 * A process that runs one partition job after another on its main thread (a queue worker taking a
 * flow's jobs) keeps one scratch database for them all, as a worker thread does.
 */
export function shareScratchOnMainThread(): void {
  sharedOnMain = true;
}

/** Runs `fn` with a scratch connection. */
export async function withScratch<T>(fn: (conn: Conn) => Promise<T>): Promise<T> {
  if (isMainThread && !sharedOnMain) {
    const db = await openDuck(":memory:", OPTS);
    try {
      return await fn(db.conn);
    } finally {
      db.close();
    }
  }
  shared ??= DuckDBInstance.create(":memory:", OPTS);
  // One job at a time: a job drops every table of the database when it ends.
  const turn = previous.then(async () => {
    const conn = await (await shared!).connect();
    try {
      return await fn(conn);
    } finally {
      await dropAll(conn);
      conn.closeSync();
    }
  });
  previous = turn.catch(() => undefined);
  return turn;
}
let previous: Promise<unknown> = Promise.resolve();

async function dropAll(conn: Conn): Promise<void> {
  const [names = [], kinds = []] = (await columns(
    conn,
    `select table_name, table_type from information_schema.tables where table_catalog in ('memory', 'temp')`,
  )) as [string[], string[]];
  for (let i = 0; i < names.length; i++)
    await conn.run(`drop ${kinds[i] === "VIEW" ? "view" : "table"} if exists ${ident(names[i])}`);
}

/** Closes this thread's scratch database (a worker calls it before it exits). */
export async function closeScratch(): Promise<void> {
  const db = await shared;
  shared = null;
  db?.closeSync();
}
