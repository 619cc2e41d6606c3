// Reading long (id, date, value) rows back into one series per id.

import type { PipelineErrorCode } from "../../domain/errors.ts";
import { isoFromEpochDay } from "../../shared/dates.ts";
import { Binds, type Conn, columns, type Params } from "../duck/duck.ts";
import { numericColumns } from "../duck/typed-read.ts";

/** Long (id, date, value) rows → one series per id (dates cross as text, once per distinct date). */
export async function seriesOf(
  conn: Conn,
  sql: string,
  params?: Params,
): Promise<Map<string, { dates: string[]; values: Float64Array }>> {
  const [ids = [], ds = [], v = []] = (await columns(conn, sql, params)) as [string[], string[], number[]];
  const out = new Map<string, { dates: string[]; values: Float64Array }>();
  let start = 0;
  for (let i = 1; i <= ids.length; i++) {
    if (i < ids.length && ids[i] === ids[start]) continue;
    out.set(ids[start], { dates: ds.slice(start, i), values: Float64Array.from(v.slice(start, i)) });
    start = i;
  }
  return out;
}

export type Series = { dates: string[]; values: Float64Array };

/** A Parquet file's series were not stored in (id, date) order (`storedSeries`' precondition). */
export class StorageOrderError extends Error {
  readonly code: PipelineErrorCode = "storage_order";
  constructor(file: string, what: string) {
    super(`${file}: ${what}; its rows must be stored ordered by id, then date`);
    this.name = "StorageOrderError";
  }
}

/**
 * The same as `seriesOf` over Parquet `files` (columns id, date, value; `where(b)` filters, values bound in b), for big
 * reads: each file stores its rows ordered by id, then date, and a later file holds an id's later
 * dates (a published part, then the appended days), so the rows are read in storage order and
 * concatenated per id instead of sorted (sorting a partition's ~1.6M rows was most of its read).
 * The order is checked, not assumed: each id's rows are one run in id order (their file row
 * numbers), and its dates ascend across the files. Values and dates (as epoch days) cross as
 * typed arrays; series of the same dates share one dates array, so their calendar parts and
 * aligned benchmarks are computed once.
 */
export async function storedSeries(
  conn: Conn,
  files: string[],
  where: (b: Binds) => string,
  col: SeriesColumns,
): Promise<Map<string, Series>> {
  const pieces: Piece[] = [];
  for (const file of files) pieces.push(await readPiece(conn, file, where, col));
  return concatRuns(pieces, files);
}

type SeriesColumns = { id: string; date: string; value: string };
/** One file's rows in storage order: per id (ascending) its row count and where its run starts. */
type Piece = { ids: string[]; counts: number[]; days: Int32Array; values: Float64Array; at: number[] };

/** One file's ids with their row counts, checked to be one run each in id order. */
async function runsOf(conn: Conn, file: string, where: (b: Binds) => string, idCol: string) {
  const b = new Binds();
  const rel = `read_parquet(${b.v(file)}, file_row_number = true)`;
  const [ids = [], counts = [], first = [], last = []] = (await columns(
    conn,
    `select ${idCol}, count(*)::integer, min(file_row_number)::double, max(file_row_number)::double from ${rel} ` +
      `where ${where(b)} group by 1 order by 1`,
    b.params,
  )) as [string[], number[], number[], number[]];
  for (let k = 0; k < ids.length; k++) {
    if (last[k] - first[k] + 1 !== counts[k] || (k > 0 && first[k] <= last[k - 1]))
      throw new StorageOrderError(
        file,
        `the rows of ${ids[k]} are not one run after ${k > 0 ? ids[k - 1] : "the start"}`,
      );
  }
  return { ids, counts };
}

async function readPiece(conn: Conn, file: string, where: (b: Binds) => string, col: SeriesColumns): Promise<Piece> {
  const { ids, counts } = await runsOf(conn, file, where, col.id);
  // DuckDB keeps a scan's rows in storage order (preserve_insertion_order, on by default): no ORDER BY, no sort
  const at: number[] = [];
  let n = 0;
  for (const c of counts) {
    at.push(n);
    n += c;
  }
  // (a DATE column crosses as its epoch days)
  // (materialized: a partition's rows, read without an await per chunk)
  const vb = new Binds();
  const [days, values] = (await numericColumns(
    conn,
    `select ${col.date}::date, ${col.value}::double from read_parquet(${vb.v(file)}) where ${where(vb)}`,
    ["i32", "f64"],
    { expectRows: n, materialized: true, params: vb.params },
  )) as [Int32Array, Float64Array];
  if (n !== days.length) throw new StorageOrderError(file, `${days.length} rows read, ${n} counted`);
  return { ids, counts, days, values, at };
}

/** Each id's runs, file after file, concatenated into one series per id; its dates must ascend. */
function concatRuns(pieces: Piece[], files: string[]): Map<string, Series> {
  const runs = new Map<string, { piece: number; at: number; count: number }[]>();
  pieces.forEach((p, i) => {
    p.ids.forEach((id, k) => {
      (runs.get(id) ?? runs.set(id, []).get(id)!).push({ piece: i, at: p.at[k], count: p.counts[k] });
    });
  });
  const total = pieces.reduce((a, p) => a + p.days.length, 0);
  const days = new Int32Array(total);
  const values = new Float64Array(total);
  const ids: string[] = [];
  const counts: number[] = [];
  let n = 0;
  for (const [id, rs] of runs) {
    const start = n;
    for (const r of rs) {
      days.set(pieces[r.piece].days.subarray(r.at, r.at + r.count), n);
      values.set(pieces[r.piece].values.subarray(r.at, r.at + r.count), n);
      n += r.count;
    }
    for (let i = start + 1; i < n; i++)
      if (days[i] <= days[i - 1]) throw new StorageOrderError(files.join(", "), `the dates of ${id} do not ascend`);
    ids.push(id);
    counts.push(n - start);
  }
  return seriesOfRuns(ids, counts, days, values);
}

/**
 * One series per id from consecutive runs of (epoch day, value), dates shared between equal runs;
 * each series' values are a view of `values` (which nothing else holds), not a copy.
 */
function seriesOfRuns(ids: string[], counts: number[], days: Int32Array, values: Float64Array): Map<string, Series> {
  const iso = new Map<number, string>();
  const text = (d: number) => {
    let s = iso.get(d);
    if (s === undefined) {
      s = isoFromEpochDay(d);
      iso.set(d, s);
    }
    return s;
  };
  // Candidates by length, first and last day: a full comparison only where those three agree.
  const seen = new Map<string, { at: number; dates: string[] }[]>();
  const same = (a: number, b: number, len: number) => {
    for (let k = 0; k < len; k++) if (days[a + k] !== days[b + k]) return false;
    return true;
  };
  const out = new Map<string, Series>();
  let at = 0;
  for (let k = 0; k < ids.length; k++) {
    const len = counts[k];
    const key = `${len}:${days[at]}:${days[at + len - 1]}`;
    const candidates = seen.get(key) ?? [];
    let dates = candidates.find((c) => same(c.at, at, len))?.dates;
    if (!dates) {
      dates = Array.from(days.subarray(at, at + len), text);
      candidates.push({ at, dates });
      seen.set(key, candidates);
    }
    out.set(ids[k], { dates, values: values.subarray(at, at + len) });
    at += len;
  }
  return out;
}
