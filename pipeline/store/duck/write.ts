// Writing JS-computed rows into snapshot Parquet files through DuckDB's appender.
import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { replaceFileAtomic } from "../coordination/atomic-write.ts";
import { type Conn, ident, type Params, run } from "./duck.ts";

export type ColKind = "varchar" | "double" | "integer" | "date" | "boolean";
export type Cell = string | number | boolean | null;

/**
 * Creates `table` with `cols` (dates staged as text, cast on export) and appends `rowsIn`. A row's
 * cells are read before the next row is asked for, so a generator may yield one array each time.
 */
export async function appendTable(
  conn: Conn,
  table: string,
  cols: [string, ColKind][],
  rowsIn: Iterable<Cell[]>,
): Promise<number> {
  const ddl = cols.map(([n, k]) => `${ident(n)} ${k === "date" ? "varchar" : k}`).join(", ");
  await conn.run(`create or replace table ${ident(table)} (${ddl})`);
  const a = await conn.createAppender(table);
  let n = 0;
  try {
    for (const r of rowsIn) {
      for (let i = 0; i < cols.length; i++) {
        const v = r[i];
        if (v === null || v === undefined || (typeof v === "number" && Number.isNaN(v))) a.appendNull();
        else if (cols[i][1] === "double") a.appendDouble(v as number);
        else if (cols[i][1] === "integer") a.appendInteger(v as number);
        else if (cols[i][1] === "boolean") a.appendBoolean(v as boolean);
        else a.appendVarchar(String(v));
      }
      a.endRow();
      n++;
    }
    a.flushSync();
    a.closeSync();
  } catch (e) {
    // A failed flush (a full disk) leaves rows buffered; destroyed by the garbage collector, the
    // appender would flush them again where no JavaScript can catch the failure. Dropped here instead.
    try {
      a.clear();
      a.closeSync();
    } catch {
      // the flush's own error is the one to report
    }
    throw e;
  }
  return n;
}

/** Exports a table of `conn` to `<dir>/<table>.parquet`, casting staged date text to DATE. */
export async function exportParquet(
  conn: Conn,
  table: string,
  dir: string,
  dateCols: string[] = [],
  orderBy?: string,
): Promise<void> {
  await exportParquetFile(conn, table, join(dir, `${table}.parquet`), dateCols, orderBy);
}

/**
 * Exports a table of `conn` to the Parquet file `file` (a partition of a table folder). Small row
 * groups (`rowGroupSize`) let a reader asking for one ticker decode only the groups that hold it.
 */
export async function exportParquetFile(
  conn: Conn,
  table: string,
  file: string,
  dateCols: string[] = [],
  orderBy?: string,
  rowGroupSize?: number,
): Promise<void> {
  const replace = dateCols.length
    ? ` replace (${dateCols.map((c) => `cast(${ident(c)} as date) as ${ident(c)}`).join(", ")})`
    : "";
  const order = orderBy ? ` order by ${orderBy}` : "";
  await exportQueryFile(conn, `select *${replace} from ${ident(table)}${order}`, file, rowGroupSize);
}

/** A query's result as one Parquet file (zstd). */
export async function exportQueryFile(
  conn: Conn,
  sql: string,
  file: string,
  rowGroupSize?: number,
  params: Params = {},
): Promise<void> {
  mkdirSync(dirname(file), { recursive: true });
  const groups = rowGroupSize ? `, row_group_size ${rowGroupSize}` : "";
  // Written aside and renamed into place: a file that exists is whole (a flow skips partitions whose
  // output exists), and a reader of an earlier copy keeps reading that copy.
  await replaceFileAtomic(
    file,
    // the file as a bound value: `$copy_to`, beside the query's own (which must not use that name)
    async (tmp) => {
      await run(conn, `copy (${sql}) to $copy_to (format parquet, compression zstd${groups})`, {
        ...params,
        copy_to: tmp,
      });
    },
    { tmp: `${file}.tmp`, keepOnFailure: true },
  );
}

/** Row groups of the per-ticker tables: a few dozen companies each. */
export const KEYED_ROW_GROUP = 4096;
