// A query result as columnar batches in Arrow's memory layout (values, validity bitmap, UTF-8
// offsets and bytes), copied from DuckDB's chunks a block at a time: numbers and dates as typed
// array copies, short strings (DuckDB inlines up to 12 bytes) as byte copies, so 31 M rows cross
// without one JS value per cell. api/output/arrow.ts frames each batch as an Arrow record batch.
import type { DuckDBDataChunk, DuckDBVector } from "@duckdb/node-api";

export type ColumnType = "f64" | "i32" | "date" | "utf8";

export interface ColumnBatch {
  length: number;
  columns: BatchColumn[];
  /**
   * Hands the batch's memory back for a later batch: call once nothing reads its columns any more
   * (its bytes are written out). Optional: a batch never released is garbage collected instead.
   */
  release(): void;
}

export interface BatchColumn {
  type: ColumnType;
  /** f64: Float64Array; i32 and date (days since the epoch): Int32Array; utf8: the bytes. */
  values: Float64Array | Int32Array | Uint8Array;
  /** utf8 only: length + 1 offsets into `values`. */
  offsets?: Int32Array;
  /** Bit i set: row i valid (Arrow's bitmap); null when every row is. */
  validity: Uint8Array | null;
  nullCount: number;
}

/** DuckDB type names of the snapshot tables → batch column types. */
export function columnTypeOf(duckType: string): ColumnType {
  if (duckType === "DOUBLE") return "f64";
  if (duckType === "INTEGER") return "i32";
  if (duckType === "DATE") return "date";
  if (duckType === "VARCHAR") return "utf8";
  throw new TypeError(`export: no batch column for DuckDB type ${duckType}`);
}

const ALL_VALID = 0xffff_ffff_ffff_ffffn;
type Validity = { data: BigUint64Array | null };
type Raw = { items?: Float64Array | Int32Array; validity?: Validity; dataView?: DataView };

/** One column being filled: fixed capacity for numbers, growing bytes for strings. */
class ColumnBuilder {
  private values: Float64Array | Int32Array | Uint8Array;
  private offsets: Int32Array | null = null;
  private bitmap: Uint8Array;
  private nulls = 0;
  private bytes = 0;
  private readonly encoder = new TextEncoder();

  constructor(
    readonly type: ColumnType,
    cap: number,
  ) {
    this.values =
      type === "f64" ? new Float64Array(cap) : type === "utf8" ? new Uint8Array(cap * 8) : new Int32Array(cap);
    if (type === "utf8") this.offsets = new Int32Array(cap + 1);
    this.bitmap = new Uint8Array(Math.ceil(cap / 8)).fill(0xff);
  }

  /** Appends rows [0, n) of the vector at row `at` of the batch. */
  append(v: DuckDBVector, n: number, at: number): void {
    const raw = v as unknown as Raw;
    const invalid = this.markInvalid(raw.validity, n, at);
    if (this.type === "utf8") this.appendStrings(v, raw, n, at, invalid);
    else {
      const items = raw.items;
      if (!(items instanceof Float64Array || items instanceof Int32Array))
        throw new TypeError(`export: column is ${v.type.toString()}, not ${this.type}`);
      (this.values as Float64Array | Int32Array).set(items.subarray(0, n), at);
    }
  }

  /**
   * Clears the bits of invalid rows; answers whether any row was invalid. DuckDB's validity words
   * are little-endian, so their bytes are Arrow's bitmap bytes (bit j of byte k: row 8k + j): a
   * byte of all-valid rows is skipped whole, one with nulls looked at bit by bit.
   */
  private markInvalid(validity: Validity | undefined, n: number, at: number): boolean {
    const words = validity?.data;
    if (!words) return false;
    const bytes = new Uint8Array(words.buffer, words.byteOffset, Math.ceil(n / 8));
    let any = false;
    for (let w = 0; w * 64 < n; w++) {
      if (words[w] === ALL_VALID) continue;
      for (let k = w * 8; k < Math.min(bytes.length, w * 8 + 8); k++) {
        const b = bytes[k];
        if (b === 0xff) continue;
        for (let j = 0; j < 8 && k * 8 + j < n; j++) {
          if (b & (1 << j)) continue;
          const r = at + k * 8 + j;
          this.bitmap[r >> 3] &= ~(1 << (r & 7));
          this.nulls++;
          any = true;
        }
      }
    }
    return any;
  }

  private appendStrings(v: DuckDBVector, raw: Raw, n: number, at: number, invalid: boolean): void {
    const offsets = this.offsets!;
    const dv = raw.dataView;
    if (!dv) throw new TypeError(`export: column is ${v.type.toString()}, not VARCHAR`);
    const src = new Uint8Array(dv.buffer, dv.byteOffset, n * 16);
    this.reserve(n * 12); // every inline string fits; a longer one reserves its own room below
    let out = this.values as Uint8Array;
    let pos = this.bytes;
    for (let i = 0; i < n; i++) {
      const r = at + i;
      offsets[r] = pos;
      if (invalid && !(this.bitmap[r >> 3] & (1 << (r & 7)))) continue;
      // DuckDB's string_t: a little-endian length, then up to 12 bytes inline; longer ones hold a pointer.
      // Copied byte by byte: a subarray per row costs more than the copy.
      const o = i * 16;
      const len = src[o] | (src[o + 1] << 8) | (src[o + 2] << 16) | (src[o + 3] << 24);
      if (len <= 12) {
        for (let k = 0; k < len; k++) out[pos + k] = src[o + 4 + k];
        pos += len;
      } else {
        this.bytes = pos;
        this.reserve(len + (n - i) * 12);
        out = this.values as Uint8Array;
        pos += this.encoder.encodeInto(v.getItem(i) as string, out.subarray(pos)).written;
      }
    }
    this.bytes = pos;
    offsets[at + n] = pos;
  }

  private reserve(more: number): void {
    const buf = this.values as Uint8Array;
    if (this.bytes + more <= buf.length) return;
    const next = new Uint8Array(Math.max(buf.length * 2, this.bytes + more));
    next.set(buf.subarray(0, this.bytes));
    this.values = next;
  }

  /** The column of the batch's first `length` rows: views of the builder's arrays, valid until `reset`. */
  finish(length: number): BatchColumn {
    const validity = this.nulls ? this.bitmap.subarray(0, Math.ceil(length / 8)) : null;
    if (this.type === "utf8")
      return {
        type: this.type,
        values: (this.values as Uint8Array).subarray(0, this.bytes),
        offsets: this.offsets!.subarray(0, length + 1),
        validity,
        nullCount: this.nulls,
      };
    return { type: this.type, values: this.values.subarray(0, length), validity, nullCount: this.nulls };
  }

  /** Empty again, its arrays kept (their capacity too) for the next batch. */
  reset(): void {
    if (this.nulls) this.bitmap.fill(0xff);
    this.nulls = 0;
    this.bytes = 0;
  }
}

/** DuckDB's chunks hold at most this many rows (STANDARD_VECTOR_SIZE). */
const CHUNK_ROWS = 2048;

/**
 * Fills batches of about `rowsPerBatch` rows from DuckDB chunks. A batch ends on a chunk's end (at
 * most one chunk past `rowsPerBatch`): a sliced vector keeps its parent's buffers with an offset.
 * A released batch's arrays fill a later one: an export allocates a few batches' worth of memory,
 * not one per batch (hundreds of MB of short-lived buffers make V8 collect a large heap again and again).
 */
export class BatchAssembler {
  private builders: ColumnBuilder[];
  private readonly spare: ColumnBuilder[][] = [];
  private rows = 0;

  constructor(
    private readonly types: readonly ColumnType[],
    private readonly rowsPerBatch: number,
  ) {
    this.builders = this.fresh();
  }

  private fresh(): ColumnBuilder[] {
    return this.spare.pop() ?? this.types.map((t) => new ColumnBuilder(t, this.rowsPerBatch + CHUNK_ROWS));
  }

  /** Adds a chunk; answers a batch when this one completed it. */
  add(chunk: DuckDBDataChunk): ColumnBatch | null {
    const n = chunk.rowCount;
    if (n > CHUNK_ROWS) throw new RangeError(`export: a chunk of ${n} rows`);
    for (let c = 0; c < this.types.length; c++) this.builders[c].append(chunk.getColumnVector(c), n, this.rows);
    this.rows += n;
    return this.rows >= this.rowsPerBatch ? this.flush() : null;
  }

  /** The rows added since the last batch, as one (null when none). */
  flush(): ColumnBatch | null {
    if (this.rows === 0) return null;
    const used = this.builders;
    let released = false;
    const batch: ColumnBatch = {
      length: this.rows,
      columns: used.map((b) => b.finish(this.rows)),
      release: () => {
        if (released) return;
        released = true;
        for (const b of used) b.reset();
        if (this.spare.length < 2) this.spare.push(used);
      },
    };
    this.builders = this.fresh();
    this.rows = 0;
    return batch;
  }
}
