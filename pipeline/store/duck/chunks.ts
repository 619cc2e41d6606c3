// Appending JS columns to a DuckDB table a data chunk at a time: each cell is written into the
// chunk's typed buffer in JS and the chunk crosses into DuckDB once (2,048 rows), where the row
// appender (write.ts appendTable) crosses per cell — about 20 times slower for wide numeric tables.
import {
  DuckDBBlobType,
  DuckDBBlobValue,
  DuckDBDataChunk,
  DuckDBDoubleType,
  DuckDBIntegerType,
  type DuckDBType,
  DuckDBVarCharType,
} from "@duckdb/node-api";
import { type Conn, ident } from "./duck.ts";

/** A column as JS holds it: numbers (NaN: null), text or bytes (null: null). */
export type JsColumn = Float64Array | Int32Array | readonly (string | null)[] | readonly (Uint8Array | null)[];
export type ChunkKind = "double" | "integer" | "varchar" | "blob";

const TYPES: Record<ChunkKind, DuckDBType> = {
  double: DuckDBDoubleType.instance,
  integer: DuckDBIntegerType.instance,
  varchar: DuckDBVarCharType.instance,
  blob: DuckDBBlobType.instance,
};

/** A table being filled from columns: `append` adds rows, `close` flushes them. */
export interface ColumnAppender {
  append(columns: readonly JsColumn[], rows: number): void;
  close(): void;
}

/** Creates (or replaces) `table` with `cols` and returns its appender. */
export async function columnAppender(conn: Conn, table: string, cols: [string, ChunkKind][]): Promise<ColumnAppender> {
  await conn.run(`create or replace table ${ident(table)} (${cols.map(([n, k]) => `${ident(n)} ${k}`).join(", ")})`);
  const a = await conn.createAppender(table);
  const types = cols.map(([, k]) => TYPES[k]);
  const size = 2048;
  return {
    append(columns, rows) {
      for (let start = 0; start < rows; start += size) {
        const n = Math.min(size, rows - start);
        const chunk = DuckDBDataChunk.create(types, n);
        columns.forEach((col, c) => {
          const v = chunk.getColumnVector(c);
          for (let r = 0; r < n; r++) {
            const x = col[start + r];
            if (x instanceof Uint8Array) v.setItem(r, new DuckDBBlobValue(x));
            else v.setItem(r, x === null || (typeof x === "number" && Number.isNaN(x)) ? null : x);
          }
          v.flush();
        });
        a.appendDataChunk(chunk);
      }
    },
    close() {
      a.flushSync();
      a.closeSync();
    },
  };
}
