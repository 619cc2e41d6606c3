// Thin helpers over @duckdb/node-api: one place that knows how we open, bind and read (values always bound).
import { randomBytes } from "node:crypto";
import { mkdirSync, rmdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { DuckDBConnection, DuckDBValue } from "@duckdb/node-api";
import { stagingLayout } from "../snapshot/staging-layout.ts";

export type { DuckDBValue };

// Loaded with require: imported from ESM, Node would first scan every one of the package's ~180
// CommonJS files for its export names (cjs-module-lexer), about 0.15 s of CPU in each thread
// that opens a database (the CLI's and every partition worker's). Other modules take it from here.
export const { DuckDBInstance, JSDuckDBValueConverter, listValue, structValue } = createRequire(import.meta.url)(
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
 * thread, medians of four interleaved runs: 68.5 -> 60.0 s, 79 -> 68 CPU s. One file per opener: a
 * job's retry elsewhere while the first attempt still runs, or another job of the run (a flow's whole
 * steps may run side by side), opens its own. `dispose()` closes it and removes what is its own (the
 * file and its WAL; DuckDB removes its spill files as it closes), and `<out>.tmp` once it is empty.
 */
export async function openStagingDuck(
  out: string,
  opts: Record<string, string> = {},
): Promise<Awaited<ReturnType<typeof openDuck>> & { file: string; dispose(): void }> {
  const dir = stagingLayout(out).tmp;
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `staging-${process.pid}-${randomBytes(4).toString("hex")}.duckdb`);
  const db = await openDuck(file, { temp_directory: dir, ...opts });
  const dispose = () => {
    db.close();
    for (const path of [file, `${file}.wal`]) rmSync(path, { force: true });
    try {
      rmdirSync(dir);
    } catch {
      // another opener's files are in it (or it is gone)
    }
  };
  return { ...db, file, dispose };
}

/** SQL identifier: only for names from our own fixed lists and specs, never for data. */
export const ident = (s: string) => `"${s.replaceAll('"', '""')}"`;

/**
 * Values bound to one statement, by name or position ($1 …): data never becomes SQL text (a NUL or
 * quote stays data).
 */
export type Params = Record<string, DuckDBValue> | DuckDBValue[];

/**
 * Collects the values of one statement: `b.v(x)` binds x and gives its placeholder (`$p0`, `$p1`
 * …) to write into the SQL; run the statement with `b.params`. A list (`b.list(files)`) binds as
 * one LIST(VARCHAR) value. Each placeholder must appear in the statement it was made for: DuckDB
 * refuses a value no placeholder names.
 */
export class Binds {
  readonly params: Record<string, DuckDBValue> = {};
  private n = 0;
  v(value: DuckDBValue): string {
    const name = `p${this.n++}`;
    this.params[name] = value;
    return `$${name}`;
  }
  /** Each value bound on its own, as the items of an `in (…)` list (`null` for none, which matches nothing). */
  each(values: readonly DuckDBValue[]): string {
    return values.map((x) => this.v(x)).join(", ") || "null";
  }
  /** The values as one bound LIST(VARCHAR) (a list of files for read_parquet). */
  list(values: readonly string[]): string {
    return `${this.v(listValue(values))}::varchar[]`;
  }
}

/** Params as the client wants them: none at all when empty (a statement without values is not prepared). */
export const bound = (p?: Params) => (p && (Array.isArray(p) ? p.length : Object.keys(p).length) ? p : undefined);

/** Runs one statement with its bound values. */
export function run(conn: Conn, sql: string, params?: Params) {
  return conn.run(sql, bound(params));
}

export async function rows<T = Record<string, unknown>>(conn: Conn, sql: string, params?: Params): Promise<T[]> {
  const r = await conn.runAndReadAll(sql, bound(params));
  return r.getRowObjectsJS() as T[];
}

/** Columns of a result as plain JS arrays, in select order. */
export async function columns(conn: Conn, sql: string, params?: Params): Promise<unknown[][]> {
  const r = await conn.runAndReadAll(sql, bound(params));
  const cols = r.getColumnsJS() as unknown[][];
  // no rows: the client gives no columns at all; callers destructure one array per column
  return cols.length === r.columnCount ? cols : Array.from({ length: r.columnCount }, () => []);
}

/**
 * As `columns`, converted one 2,048-row chunk at a time with a turn of the event loop between: for
 * results of thousands of rows read while a server answers requests (a reader's open), whose
 * conversion in one piece held every request in flight (5,000 companies: 18–46 ms at a stretch).
 */
export async function columnsInSlices(conn: Conn, sql: string, params?: Params): Promise<unknown[][]> {
  const r = await conn.run(sql, bound(params));
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

export async function scalar<T>(conn: Conn, sql: string, params?: Params): Promise<T> {
  const r = await conn.runAndReadAll(sql, bound(params));
  return r.getRowsJS()[0]?.[0] as T;
}

/**
 * `getvariable('<name>')`, for a variable name of ours (a fixed name, or one made of a table name
 * from our specs): checked to be a plain identifier, as `ident` is for names, so no data gets here.
 */
export function variableRef(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`not a variable name of ours: ${JSON.stringify(name)}`);
  return ["getvariable('", name, "')"].join("");
}

/**
 * Sets session variable `name` (a name of ours) to a bound value on each connection. DuckDB
 * cannot prepare `create view`, so a view over Parquet files reads them from a variable
 * (`read_parquet(getvariable('x'))`, re-read at every query as a literal was): variables belong to
 * one connection, hence one set per connection that reads the view.
 */
export async function setVariable(conns: readonly Conn[], name: string, value: DuckDBValue): Promise<void> {
  for (const c of conns) await c.run(`set variable ${ident(name)} = $v`, { v: value });
}
