// Thin helpers over @duckdb/node-api: one place that knows how we open, quote and read.
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { DuckDBConnection } from "@duckdb/node-api";

// Loaded with require: imported from ESM, Node would first scan every one of the package's ~180
// CommonJS files for its export names (cjs-module-lexer), about 0.15 s of CPU in each thread
// that opens a database (the CLI's and every partition worker's). Other modules take it from here.
export const { DuckDBInstance, JSDuckDBValueConverter } = createRequire(import.meta.url)(
  "@duckdb/node-api",
) as typeof import("@duckdb/node-api");
export type DuckDBInstance = import("@duckdb/node-api").DuckDBInstance;

export type Conn = DuckDBConnection;

export async function openDuck(
  path = ":memory:",
  opts: Record<string, string> = {},
): Promise<{ conn: Conn; connect(): Promise<Conn>; close(): void }> {
  const instance = await DuckDBInstance.create(path, { threads: "2", ...opts });
  const conn = await instance.connect();
  const more: Conn[] = [];
  return {
    conn,
    /** Another connection to the same database (one query runs per connection at a time). */
    async connect() {
      const c = await instance.connect();
      more.push(c);
      return c;
    },
    close() {
      for (const c of more) c.closeSync();
      conn.closeSync();
      instance.closeSync();
    },
  };
}

/**
 * A run's staging database: a DuckDB file of this process's own in `<out>.tmp` (removed with that
 * folder; DuckDB also spills there), not `:memory:`. A file database stores its tables compressed
 * (ALP for the prices, dictionaries for the tickers): the 5,000 x 25 universe's 32 M prices take
 * 0.4 GB instead of 2.6 GB, so under the 1 GB limit nothing is spilled (in memory, 0.9 GB of them
 * was) and every later scan reads a tenth of the bytes. The flow's ingest job alone on one DuckDB
 * thread, medians of four interleaved runs: 68.5 -> 60.0 s, 79 -> 68 CPU s. One
 * file per process: a job's retry elsewhere while the first attempt still runs opens its own.
 */
export async function openStagingDuck(out: string, opts: Record<string, string> = {}): ReturnType<typeof openDuck> {
  const dir = `${out}.tmp`;
  mkdirSync(dir, { recursive: true });
  return openDuck(join(dir, `staging-${process.pid}-${randomBytes(4).toString("hex")}.duckdb`), {
    temp_directory: dir,
    ...opts,
  });
}

/** SQL string literal. */
export const lit = (s: string) => `'${s.replaceAll("'", "''")}'`;
/** SQL identifier. */
export const ident = (s: string) => `"${s.replaceAll('"', '""')}"`;

export async function rows<T = Record<string, unknown>>(conn: Conn, sql: string): Promise<T[]> {
  const r = await conn.runAndReadAll(sql);
  return r.getRowObjectsJS() as T[];
}

/** Columns of a result as plain JS arrays, in select order. */
export async function columns(conn: Conn, sql: string): Promise<unknown[][]> {
  const r = await conn.runAndReadAll(sql);
  return r.getColumnsJS() as unknown[][];
}

/**
 * As `columns`, converted one 2,048-row chunk at a time with a turn of the event loop between: for
 * results of thousands of rows read while a server answers requests (a reader's open), whose
 * conversion in one piece held every request in flight (5,000 companies: 18–46 ms at a stretch).
 */
export async function columnsInSlices(conn: Conn, sql: string): Promise<unknown[][]> {
  const r = await conn.run(sql);
  const out: unknown[][] = Array.from({ length: r.columnCount }, () => []);
  for (let i = 0; i < r.chunkCount; i++) {
    if (i > 0) await new Promise((next) => setImmediate(next));
    r.getChunk(i)
      .convertColumns(JSDuckDBValueConverter)
      .forEach((c, k) => {
        for (const v of c) out[k].push(v);
      });
  }
  return out;
}

export async function scalar<T>(conn: Conn, sql: string): Promise<T> {
  const r = await conn.runAndReadAll(sql);
  return r.getRowsJS()[0]?.[0] as T;
}
