// The DuckDB database the lazy snapshot readers of a process share. Each reader keeps its tables
// in a schema of its own and reads through connections of its own; retiring a reader drops its
// schema in a query and disconnects. The database itself is never closed while the process
// serves: closing one is synchronous and frees every cached file block and Parquet footer on the
// calling thread, 0.1-0.25 s of the server's event loop at 5,000 x 25 even after releasing the
// caches in queries, i.e. every request in flight during a swap waited that long. A retired
// reader's cached blocks and footers are left to DuckDB's own eviction under the memory limit
// (both caches are buffer-managed), so memory stays bounded across swaps.
import { DuckDBInstance, type Conn } from "./duck.ts";

/** The shared database: one reader's tables plus both readers' caches during a swap fit in this. */
export const READER_MEMORY_LIMIT = "384MB";

let shared: Promise<InstanceType<typeof DuckDBInstance>> | null = null;
let schemas = 0;

async function create(): Promise<InstanceType<typeof DuckDBInstance>> {
  const instance = await DuckDBInstance.create(":memory:", { threads: "2", memory_limit: READER_MEMORY_LIMIT });
  const c = await instance.connect();
  try {
    // The metadata cache keeps each Parquet file's footer after the first read, so a request
    // costs the row groups of its ticker, not the file's metadata again. (`enable_object_cache`
    // is a no-op since DuckDB 1.1; this setting needs the parquet extension loaded first.)
    await c.run("load parquet");
    await c.run("set global parquet_metadata_cache = true");
  } finally {
    c.closeSync();
  }
  return instance;
}

/** A reader's share of a database: its connections, each with the reader's schema as its default. */
export interface ReaderDb {
  conns: Conn[];
  /** Drops the reader's tables (a query, off the event loop) and disconnects. */
  release(): Promise<void>;
  /** Disconnects now; the tables are dropped in the background (or with the database when it is the reader's own). */
  close(): void;
}

/**
 * `n` connections to the shared database (`own`: to a database of the reader's own, closed with
 * it: what a test needs to observe one reader's file reads alone), each with a fresh schema as
 * its default, so the reader's unqualified table names (companies, ratings …) are its own.
 */
export async function readerDb(n: number, own = false): Promise<ReaderDb> {
  let instance: InstanceType<typeof DuckDBInstance>;
  if (own) instance = await create();
  else {
    shared ??= create().catch((e: unknown) => {
      shared = null;
      throw e;
    });
    instance = await shared;
  }
  const schema = `reader_${++schemas}`;
  const conns: Conn[] = [];
  const disconnect = () => {
    for (const c of conns.splice(0)) c.closeSync();
    if (own) instance.closeSync();
  };
  try {
    for (let i = 0; i < n; i++) conns.push(await instance.connect());
    await conns[0].run(`create schema ${schema}`);
    for (const c of conns) await c.run(`set schema = '${schema}'`);
  } catch (e) {
    disconnect();
    throw e;
  }
  const drop = async () => {
    try {
      if (!own && conns.length) await conns[0].run(`drop schema if exists ${schema} cascade`);
    } catch {
      // the schema's tables stay until the process ends: a few MB, not a reason to fail a retire
    }
  };
  return {
    conns,
    async release() {
      await drop();
      disconnect();
    },
    close() {
      if (own || !conns.length) return disconnect();
      // keep one connection for the drop, disconnect it once done
      const keep = conns.shift()!;
      for (const c of conns.splice(0)) c.closeSync();
      void keep
        .run(`drop schema if exists ${schema} cascade`)
        .catch(() => undefined)
        .finally(() => keep.closeSync());
    },
  };
}
