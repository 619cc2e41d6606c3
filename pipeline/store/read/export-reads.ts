// Bulk reads of a published snapshot's tables (the API's `/data/v1/export/{table}`): a table's
// schema (the allowlist of its columns), its rows filtered by tickers, date range and columns as
// columnar batches streamed from DuckDB, or as one Parquet file DuckDB writes. Exports run on a
// database of their own (its own memory limit) with one connection per export, so a long export
// never queues behind, or ahead of, the per-request reader's queries.
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { Binds, type Conn, DuckDBInstance, ident, rows } from "../duck/duck.ts";
import { BatchAssembler, type ColumnBatch, type ColumnType, columnTypeOf } from "./export-columns.ts";
import { type ExportTable, exportSpec } from "./export-tables.ts";

export interface ExportFilter {
  /** Upper-case tickers (the table's ticker column); absent: every ticker. */
  tickers?: readonly string[];
  /** Inclusive YYYY-MM-DD bounds on the table's date column. */
  startDate?: string;
  endDate?: string;
  /** Columns in the order wanted, each one of `exportSchema`'s; absent: all of them. */
  columns?: readonly string[];
  /** Portfolio tables: the caller's user id, whose portfolios are exported beside the predefined ones. */
  ownerId?: string | null;
}

export interface ExportColumn {
  name: string;
  type: ColumnType;
}

/**
 * The exports' database: 2 threads, and a memory limit that bounds what a scan or a Parquet
 * write holds (DuckDB streams row groups; beyond the limit a query fails instead of growing
 * the process).
 */
const EXPORT_MEMORY = "256MB";
let instance: Promise<DuckDBInstance> | null = null;
const database = () => {
  instance ??= DuckDBInstance.create(":memory:", { threads: "2", memory_limit: EXPORT_MEMORY });
  return instance;
};

/** Runs `fn` on a connection of its own, closed after. */
async function withConnection<T>(fn: (c: Conn) => Promise<T>): Promise<T> {
  const c = await (await database()).connect();
  try {
    return await fn(c);
  } finally {
    c.closeSync();
  }
}

const schemas = new Map<string, Promise<ExportColumn[]>>();

/** The table's columns in stored order with their types (cached per snapshot folder and table). */
export function exportSchema(dir: string, table: ExportTable): Promise<ExportColumn[]> {
  const key = `${dir}\u0000${table}`;
  let s = schemas.get(key);
  if (!s) {
    const b = new Binds();
    const rel = exportSpec(table).relation(dir, b);
    s = withConnection((c) =>
      rows<{ column_name: string; column_type: string }>(c, `describe select * from ${rel}`, b.params),
    ).then((r) => r.map((x) => ({ name: x.column_name, type: columnTypeOf(x.column_type) })));
    s.catch(() => schemas.delete(key));
    if (schemas.size >= 256) schemas.clear();
    schemas.set(key, s);
  }
  return s;
}

/** The select of an export: columns checked against the schema, every value bound. */
function exportSelect(dir: string, table: ExportTable, schema: ExportColumn[], f: ExportFilter) {
  const spec = exportSpec(table);
  const known = new Map(schema.map((c) => [c.name, c]));
  const cols = (f.columns ?? schema.map((c) => c.name)).map((n) => {
    const c = known.get(n);
    if (!c) throw new Error(`export ${table}: no column ${JSON.stringify(n)}`);
    return c;
  });
  const b = new Binds();
  const where: string[] = [];
  if (f.tickers) {
    if (!spec.ticker) throw new Error(`export ${table}: no ticker column`);
    where.push(`${ident(spec.ticker)} in (${b.each(f.tickers)})`);
  }
  if (f.startDate !== undefined || f.endDate !== undefined) {
    if (!spec.date) throw new Error(`export ${table}: no date column`);
    if (f.startDate !== undefined) where.push(`${ident(spec.date)} >= ${b.v(f.startDate)}::date`);
    if (f.endDate !== undefined) where.push(`${ident(spec.date)} <= ${b.v(f.endDate)}::date`);
  }
  if (spec.portfolio) {
    const owner = f.ownerId == null ? "" : ` or owner_id = ${b.v(f.ownerId)}`;
    where.push(
      `${ident(spec.portfolio)} in (select id from read_parquet(${b.v(join(dir, "portfolios.parquet"))}) ` +
        `where owner_id is null${owner})`,
    );
  }
  const rel = spec.relation(dir, b);
  const filtered = where.length ? ` where ${where.join(" and ")}` : "";
  const sql = `select ${cols.map((c) => ident(c.name)).join(", ")} from ${rel}${filtered}`;
  return { sql, params: b.params, columns: cols };
}

/** Bytes of fixed-width values a batch aims at: few, large record batches; memory bounded however wide. */
const BATCH_BYTES = 4 << 20;

/** Rows per batch for these columns: BATCH_BYTES over 8 bytes a column, from one chunk to 128 Ki rows. */
export const batchRows = (columns: number) =>
  Math.max(2048, Math.min(131_072, Math.floor(BATCH_BYTES / (8 * Math.max(1, columns)))));

/**
 * The export's rows as batches of about `rowsPerBatch` rows (default `batchRows` of its columns),
 * read as DuckDB streams them: memory holds a batch or two and DuckDB's scan state, whatever the
 * table's size. Stopping the iteration (return) drops the result and closes its connection.
 */
export async function* exportBatches(
  dir: string,
  table: ExportTable,
  f: ExportFilter,
  rowsPerBatch?: number,
): AsyncGenerator<ColumnBatch, void, undefined> {
  const schema = await exportSchema(dir, table);
  const q = exportSelect(dir, table, schema, f);
  rowsPerBatch ??= batchRows(q.columns.length);
  const c = await (await database()).connect();
  try {
    const result = await c.stream(q.sql, q.params);
    const asm = new BatchAssembler(
      q.columns.map((x) => x.type),
      rowsPerBatch,
    );
    // the next chunk is asked for before this one is copied: DuckDB reads on while JS copies
    let pending = result.fetchChunk();
    for (;;) {
      const chunk = await pending;
      if (!chunk || chunk.rowCount === 0) break;
      pending = result.fetchChunk();
      const batch = asm.add(chunk);
      if (batch) yield batch;
    }
    const last = asm.flush();
    if (last) yield last;
  } finally {
    c.closeSync();
  }
}

/** The columns an export of these filters has (names and types, in order). */
export async function exportColumns(dir: string, table: ExportTable, f: ExportFilter): Promise<ExportColumn[]> {
  return exportSelect(dir, table, await exportSchema(dir, table), f).columns;
}

/**
 * The snapshot's own Parquet file when the export is exactly one whole file of it (no filter, every
 * column in stored order, the table in a single file, zstd as published): served as it is, nothing
 * rewritten. null: the export is written by `exportParquet`.
 */
export async function wholeParquetFile(dir: string, table: ExportTable, f: ExportFilter): Promise<string | null> {
  const spec = exportSpec(table);
  if (f.tickers || f.startDate !== undefined || f.endDate !== undefined || spec.portfolio) return null;
  if (f.columns) {
    const schema = await exportSchema(dir, table);
    if (f.columns.length !== schema.length || f.columns.some((c, i) => c !== schema[i].name)) return null;
  }
  const files = spec.files(dir);
  return files.length === 1 ? files[0] : null;
}

/**
 * Writes the export as one Parquet file (zstd) in `tmpDir` and answers its path; the caller
 * streams it out and removes it.
 */
export async function exportParquet(dir: string, table: ExportTable, f: ExportFilter, tmpDir: string): Promise<string> {
  const path = join(tmpDir, `export-${process.pid}-${randomBytes(8).toString("hex")}.parquet`);
  await exportParquetAt(dir, table, f, path);
  return path;
}

/** Writes the export as one Parquet file (zstd) at `path`; DuckDB writes row group by row group (bounded memory). */
export async function exportParquetAt(dir: string, table: ExportTable, f: ExportFilter, path: string): Promise<void> {
  const q = exportSelect(dir, table, await exportSchema(dir, table), f);
  const b = { ...q.params, export_path: path };
  await withConnection((c) =>
    c.run(`copy (${q.sql}) to $export_path (format parquet, compression zstd)`, b).then(() => undefined),
  );
}
