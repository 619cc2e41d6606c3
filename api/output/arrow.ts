// Arrow IPC stream bodies (`format=arrow`, application/vnd.apache.arrow.stream) of the REST
// payloads: the same flat rows as the CSV (nested objects as dotted columns), with typed columns
// instead of display text. A column's type comes from the column's kind where the JSON carries a
// number as text (ratings "7.1234", market caps, metric figures "12.5%"), else from its values:
// numbers float64 (int32 for the integer columns named below), booleans bool, YYYY-MM-DD dates
// Arrow dates (days), ISO timestamps Arrow timestamps (ms, UTC), anything else UTF-8.
import {
  AsyncByteQueue,
  Bool,
  type DataType,
  DateDay,
  Field,
  Float64,
  Int32,
  makeData,
  RecordBatch,
  RecordBatchStreamWriter,
  Schema,
  Struct,
  Table,
  TimestampMillisecond,
  tableToIPC,
  Utf8,
  type Vector,
  vectorFromArray,
} from "apache-arrow";
import type { ColumnBatch, ColumnType } from "../../pipeline/store/read/export-columns.ts";
import type { FlatRow } from "./csv.ts";

export const ARROW_STREAM_TYPE = "application/vnd.apache.arrow.stream";

/**
 * How a column's values become typed: "numeric-text" parses numbers the JSON sends as text; "date"
 * takes YYYY-MM-DD texts as Arrow dates.
 */
export type ColumnKind = "f64" | "i32" | "numeric-text" | "utf8" | "date";

/** Integer-valued columns of the REST shapes (ids of trades, counts, years, months). */
const INT_COLUMNS = new Set([
  "id",
  "Fiscal Year",
  "window",
  "count",
  "year",
  "month",
  "rebalanceFrequency",
  "maxStocks",
  "stockCount",
  "holdingsCount",
  "stock.sector.id",
  "stock.industry.id",
]);

export const DATE = /^\d{4}-\d{2}-\d{2}$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})$/;

/**
 * A number the JSON sends as text: "7.1234", "1,303.90", "12.5%" (a fraction: 0.125), "-3.43%".
 * Anything else (a date, "-" for a missing figure, an empty cell) is null.
 */
export function numberOfText(v: string): number | null {
  const m = /^([-+]?[\d,]*\.?\d+(?:[eE][-+]?\d+)?)(%?)$/.exec(v.trim());
  if (!m) return null;
  const n = Number(m[1].replaceAll(",", ""));
  if (!Number.isFinite(n)) return null;
  return m[2] ? n / 100 : n;
}

type Built = { type: DataType; values: unknown[] };

function inferred(name: string, cells: FlatRow[keyof FlatRow][]): Built {
  const present = cells.filter((v) => v !== null && v !== undefined);
  const none = () => cells.map(() => null);
  if (present.length === 0) return { type: INT_COLUMNS.has(name) ? new Int32() : new Utf8(), values: none() };
  if (present.every((v) => typeof v === "number")) {
    const int = INT_COLUMNS.has(name) && present.every((v) => Number.isInteger(v) && Math.abs(v as number) < 2 ** 31);
    return { type: int ? new Int32() : new Float64(), values: cells.map((v) => v ?? null) };
  }
  if (present.every((v) => typeof v === "boolean")) return { type: new Bool(), values: cells.map((v) => v ?? null) };
  const texts = present.every((v) => typeof v === "string") ? (present as string[]) : null;
  if (texts?.every((v) => DATE.test(v)))
    return { type: new DateDay(), values: cells.map((v) => (typeof v === "string" ? Date.parse(v) : null)) };
  if (texts?.every((v) => TIMESTAMP.test(v)))
    return {
      type: new TimestampMillisecond("UTC"),
      values: cells.map((v) => (typeof v === "string" ? Date.parse(v) : null)),
    };
  return { type: new Utf8(), values: cells.map((v) => (v === null || v === undefined ? null : String(v))) };
}

function built(name: string, kind: ColumnKind | undefined, cells: FlatRow[keyof FlatRow][]): Built {
  if (kind === "numeric-text")
    return {
      type: new Float64(),
      values: cells.map((v) => (typeof v === "number" ? v : typeof v === "string" ? numberOfText(v) : null)),
    };
  if (kind === "f64") return { type: new Float64(), values: cells.map((v) => (typeof v === "number" ? v : null)) };
  if (kind === "i32") return { type: new Int32(), values: cells.map((v) => (typeof v === "number" ? v : null)) };
  if (kind === "utf8") return { type: new Utf8(), values: cells.map((v) => (v == null ? null : String(v))) };
  if (kind === "date")
    return {
      type: new DateDay(),
      values: cells.map((v) => (typeof v === "string" && DATE.test(v) ? Date.parse(v) : null)),
    };
  return inferred(name, cells);
}

/** Flat rows as one Arrow IPC stream (schema, one record batch, end of stream). */
export function rowsToArrow(
  rows: FlatRow[],
  columns: readonly string[],
  kinds: Readonly<Record<string, ColumnKind>> = {},
): Uint8Array {
  const vectors: Record<string, Vector> = {};
  for (const name of columns) {
    const { type, values } = built(
      name,
      kinds[name],
      rows.map((r) => r[name]),
    );
    // the date builders take Date objects (DateDay stores their days)
    const dated = type instanceof DateDay ? values.map((x) => (x === null ? null : new Date(x as number))) : values;
    vectors[name] = vectorFromArray(dated, type);
  }
  return tableToIPC(new Table(vectors), "stream");
}

// ---- streamed batches (bulk exports): the schema message once, then one message per batch

const arrowType = (t: ColumnType): DataType =>
  t === "f64" ? new Float64() : t === "i32" ? new Int32() : t === "date" ? new DateDay() : new Utf8();

export function batchSchema(columns: readonly { name: string; type: ColumnType }[]): Schema {
  return new Schema(columns.map((c) => new Field(c.name, arrowType(c.type), true)));
}

/** The writer's output, kept as the pieces it writes (metadata, padding, the batches' own buffers). */
class PieceSink extends AsyncByteQueue {
  pieces: Uint8Array[] = [];
  override write(value: Uint8Array): void {
    this.pieces.push(value);
  }
  take(): Uint8Array[] {
    const out = this.pieces;
    this.pieces = [];
    return out;
  }
}

/**
 * An Arrow IPC stream as byte pieces, written by apache-arrow's RecordBatchStreamWriter: `start()`
 * the schema message, `batch()` one record-batch message (its metadata, then the batch's column
 * buffers themselves, not copied), `end()` the end-of-stream marker. The caller writes the pieces
 * out in order (corked, so each message goes to the socket as one write).
 */
export class ArrowStreamFramer {
  private readonly sink = new PieceSink();
  private readonly writer = new RecordBatchStreamWriter();

  constructor(readonly schema: Schema) {}

  start(): Uint8Array[] {
    this.writer.reset(this.sink, this.schema);
    return this.sink.take();
  }

  batch(batch: ColumnBatch): Uint8Array[] {
    const children = batch.columns.map((c, i) =>
      makeData({
        type: this.schema.fields[i].type,
        length: batch.length,
        nullCount: c.nullCount,
        nullBitmap: c.validity ?? undefined,
        ...(c.offsets ? { valueOffsets: c.offsets, data: c.values } : { data: c.values }),
      } as never),
    );
    const data = makeData({ type: new Struct(this.schema.fields), length: batch.length, nullCount: 0, children });
    this.writer.write(new RecordBatch(this.schema, data));
    return this.sink.take();
  }

  end(): Uint8Array[] {
    this.writer.finish();
    return this.sink.take();
  }
}
