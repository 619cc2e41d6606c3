// Generic source-table loader: stage the files as text in DuckDB, validate every cell in SQL
// (fast on millions of rows), report each rejected row, and only then materialise a typed table.
import { closeSync, openSync, readSync } from "node:fs";
import { basename } from "node:path";
import { parse } from "csv-parse/sync";
import {
  Binds,
  type Conn,
  ident,
  columns as readColumns,
  rows,
  run,
  setVariable,
  structValue,
  variableRef,
} from "../store/duck/duck.ts";
import type { LocatedTable } from "./locate.ts";
import type { RejectedRow } from "./report.ts";
import type { ColumnSpec, TableSpec } from "./specs.ts";

/** At most this many rejects are listed per table; the count says how many there were. */
export const MAX_REPORTED = 1000;

export interface LoadResult {
  rejects: RejectedRow[];
  rejectCount: number;
  rowCount: number;
  /** Whether `<table>_tickers` (distinct tickers with row counts) was made: even with rejects, so
   * unknown tickers are reported in the same round as row errors. */
  tickers: boolean;
  /** The typed table's rows are in strictly ascending key order (the spec's key, as the file gave them). */
  keyOrdered?: boolean;
}

/** Reading a file as text; `file`: SQL giving its path (a bound value or a session variable, never the path itself). */
function readExpr(format: LocatedTable["format"], file: string): string {
  return format === "csv"
    ? `read_csv(${file}, all_varchar = true, header = true, delim = ',', quote = '"', ` +
        `escape = '"', null_padding = true)`
    : `(select columns(*)::varchar from read_parquet(${file}))`;
}

/** One staged table of all files, each row carrying its file and 1-based row (rowid is insertion order). */
async function stageFiles(conn: Conn, raw: string, loc: LocatedTable): Promise<void> {
  const parts: string[] = [];
  for (const [i, f] of loc.files.entries()) {
    await conn.run(`create or replace temp table ${raw}_${i} as select * from ${readExpr(loc.format, "$f")}`, { f });
    // the name as a session variable: the one-file case below is a view, which cannot bind values
    await setVariable([conn], `${raw}_${i}_file`, f);
    parts.push(
      `select *, ${variableRef(`${raw}_${i}_file`)} as filename, (rowid + 1)::integer as __row from ${raw}_${i}`,
    );
  }
  // One file (the usual case) is a view over its table: no second copy of a big price file.
  if (parts.length === 1) await conn.run(`create or replace temp view ${raw}_n as ${parts[0]}`);
  else {
    await conn.run(`create or replace temp table ${raw}_n as ${parts.join(" union all by name ")}`);
    for (let i = 0; i < loc.files.length; i++) await conn.run(`drop table ${raw}_${i}`);
  }
}

async function dropStaged(conn: Conn, raw: string, loc: LocatedTable): Promise<void> {
  if (loc.files.length === 1) {
    await conn.run(`drop view ${raw}_n`);
    await conn.run(`drop table ${raw}_0`);
  } else await conn.run(`drop table ${raw}_n`);
}

function cellCheck(c: ColumnSpec, v: string): { cond: string; reason: string }[] {
  const out: { cond: string; reason: string }[] = [];
  if (c.required) out.push({ cond: `${v} is null`, reason: "missing value" });
  const num = `try_cast(${v} as double)`;
  if (c.type === "date")
    out.push({ cond: `${v} is not null and try_cast(${v} as date) is null`, reason: "not a date (YYYY-MM-DD)" });
  if (c.type === "number") {
    out.push({ cond: `${v} is not null and (${num} is null or not isfinite(${num}))`, reason: "not a number" });
    if (c.check === "positive") out.push({ cond: `${num} <= 0`, reason: "must be positive" });
    if (c.check === "nonnegative") out.push({ cond: `${num} < 0`, reason: "must not be negative" });
    if (c.check === "rating") out.push({ cond: `(${num} < 0 or ${num} > 10)`, reason: "must be within 0..10" });
  }
  return out;
}

/** The SQL type of an absent column's nulls. */
function nullType(type: ColumnSpec["type"]): string {
  return type === "number" ? "double" : type === "date" ? "date" : "varchar";
}

function typedExpr(c: ColumnSpec, v: string): string {
  if (c.type === "date") return `cast(${v} as date)`;
  if (c.type === "number") return `cast(${v} as double)`;
  if (c.name === "ticker") return `upper(trim(${v}))`;
  return `trim(${v})`;
}

/** How a staged relation maps onto the spec: columns found, missing ones, cell checks, key. */
async function planChecks(conn: Conn, spec: TableSpec, relation: string, file: string) {
  const header = (await rows<{ column_name: string }>(conn, `select column_name from (describe ${relation})`))
    .map((r) => r.column_name)
    .filter((h) => h !== "filename" && h !== "__row");
  const missing: RejectedRow[] = [];
  // Map each spec column to the header it came from (name or alias, case-insensitive).
  const source = new Map<string, string>();
  for (const c of spec.columns) {
    const names = [c.name, ...(c.aliases ?? [])].map((n) => n.toLowerCase());
    const found = header.find((h) => names.includes(h.toLowerCase()));
    if (found) source.set(c.name, found);
    else if (c.required) missing.push({ file, row: 0, column: c.name, reason: "required column is missing" });
  }
  const value = (c: ColumnSpec) => (source.has(c.name) ? ident(source.get(c.name)!) : "null");
  const checks = spec.columns.flatMap((c) =>
    source.has(c.name) ? cellCheck(c, value(c)).map((k) => ({ ...k, column: c.name })) : [],
  );
  const keyExpr = spec.key.map((k) => typedOrText(spec, k, value)).join(", ");
  // One scan answers "is anything wrong?"; the per-check report runs only when something is.
  const anyBad = checks.length
    ? `exists (select 1 from ${relation} where ${checks.map((k) => `(${k.cond})`).join(" or ")})`
    : "false";
  const dupKeys = `exists (select 1 from ${relation} group by ${keyExpr} having count(*) > 1)`;
  const typed = spec.columns.map(
    (c) => `${source.has(c.name) ? typedExpr(c, value(c)) : `null::${nullType(c.type)}`} as ${ident(c.name)}`,
  );
  const tickerExpr =
    source.has("ticker") && spec.columns.some((c) => c.name === "ticker") ? ident(source.get("ticker")!) : null;
  return { missing, checks, keyExpr, anyBad, dupKeys, typed, tickerExpr };
}

/**
 * One file, read straight from the file by a view (no staged copy): when every check passes, the
 * typed table is made from the file in one more scan. Anything wrong returns null, and the
 * staged path below (with row numbers) reports it.
 */
async function loadIfClean(conn: Conn, spec: TableSpec, loc: LocatedTable): Promise<LoadResult | null> {
  if (loc.format === "csv") return loadCsvIfClean(conn, spec, loc.files[0]);
  const view = `raw_${spec.table}_v`;
  // a view cannot bind values: it reads the file named by a session variable
  await setVariable([conn], `${view}_file`, loc.files[0]);
  await conn.run(
    `create or replace temp view ${view} as select * from ${readExpr(loc.format, variableRef(`${view}_file`))}`,
  );
  try {
    const p = await planChecks(conn, spec, view, basename(loc.files[0]));
    if (p.missing.length) return null;
    const [[bad], [dup]] = (await readColumns(conn, `select ${p.anyBad}, ${p.dupKeys}`)) as [boolean[], boolean[]];
    if (bad || dup) return null;
    await conn.run(`create or replace table ${spec.table} as select ${p.typed.join(", ")} from ${view}`);
    return await cleanResult(conn, spec, p.tickerExpr !== null);
  } finally {
    await conn.run(`drop view ${view}`);
  }
}

async function cleanResult(conn: Conn, spec: TableSpec, tickers: boolean): Promise<LoadResult> {
  const rowCount = Number((await readColumns(conn, `select count(*) from ${spec.table}`))[0][0]);
  if (tickers) await tickerCounts(conn, spec.table, spec.table, "ticker");
  return { rejects: [], rejectCount: 0, rowCount, tickers };
}

/** The header record of a CSV file (BOM and quotes handled), or null when it cannot be read. */
function csvHeader(file: string): string[] | null {
  const fd = openSync(file, "r");
  try {
    const buf = Buffer.alloc(1 << 16);
    const n = readSync(fd, buf, 0, buf.length, 0);
    const text = buf.subarray(0, n).toString("utf8");
    const end = text.search(/\r?\n/);
    if (end < 0 && n === buf.length) return null;
    const [header] = parse(end < 0 ? text : text.slice(0, end), { bom: true, relax_quotes: false }) as string[][];
    return header ?? null;
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

/**
 * The common case, a clean CSV file, in one scan and without DuckDB's sniffer: the header is read
 * here, every column is read as text and cast to its type while the table is made (a cell that
 * does not convert fails the statement), then the remaining checks (missing values, finiteness,
 * ranges, repeated keys) run on the typed table. Exactly the checks of `planChecks`, on typed
 * values; anything wrong returns null and the staged path reports it with row numbers.
 */
async function loadCsvIfClean(conn: Conn, spec: TableSpec, file: string): Promise<LoadResult | null> {
  const header = csvHeader(file);
  if (
    !header ||
    header.length === 0 ||
    new Set(header.map((h) => h.toLowerCase())).size !== header.length ||
    header.some((h) => h === "")
  )
    return null;
  const source = new Map<string, string>();
  for (const c of spec.columns) {
    const names = [c.name, ...(c.aliases ?? [])].map((n) => n.toLowerCase());
    const found = header.find((h) => names.includes(h.toLowerCase()));
    if (found) source.set(c.name, found);
    else if (c.required) return null;
  }
  // the header's names (the file's data) as a bound STRUCT value, every column VARCHAR
  const readParams = { f: file, columns: structValue(Object.fromEntries(header.map((h) => [h, "VARCHAR"]))) };
  const read =
    `read_csv($f, auto_detect = false, header = true, delim = ',', quote = '"', escape = '"', ` +
    `null_padding = true, columns = $columns)`;
  const typed = spec.columns.map(
    (c) =>
      `${source.has(c.name) ? typedExpr(c, ident(source.get(c.name)!)) : `null::${nullType(c.type)}`} ` +
      `as ${ident(c.name)}`,
  );
  try {
    await run(conn, `create or replace table ${spec.table} as select ${typed.join(", ")} from ${read}`, readParams);
  } catch {
    return null;
  }
  const bad = spec.columns.filter((c) => source.has(c.name)).flatMap((c) => typedChecks(c, ident(c.name)));
  const anyBad = bad.length
    ? `exists (select 1 from ${spec.table} where ${bad.map((b) => `(${b})`).join(" or ")})`
    : "false";
  const [[isBad]] = (await readColumns(conn, `select ${anyBad}`)) as [boolean[]];
  // Keys in strictly ascending order have no repeats: one pass over the rows instead of a
  // grouping of every key (at 5,000 × 25, 32 M prices: ~4 s against ~10–15 s), and the table's
  // export needs no sort (ingest.ts). Files written in key order (the generator's, the S&P file's)
  // take this path; any other order falls back to the grouping.
  const keyOrdered = !isBad && (await keysAscending(conn, spec.table, spec.key));
  const isDup =
    !isBad &&
    !keyOrdered &&
    (
      (await readColumns(
        conn,
        `select exists (select 1 from ${spec.table} group by ${spec.key.map(ident).join(", ")} having count(*) > 1)`,
      )) as [boolean[]]
    )[0][0];
  if (isBad || isDup) {
    await conn.run(`drop table ${spec.table}`);
    return null;
  }
  return { ...(await cleanResult(conn, spec, source.has("ticker"))), keyOrdered };
}

/**
 * Whether every row's key is greater than the previous row's, in the table's storage order: the
 * table beside itself shifted by one row (a positional join; DuckDB keeps a scan's rows in storage
 * order, preserve_insertion_order being on). Keys compare as their typed values, column by column.
 */
export async function keysAscending(conn: Conn, table: string, key: string[]): Promise<boolean> {
  const a = key.map((k, i) => `${ident(k)} as a${i}`).join(", ");
  const b = key.map((k, i) => `${ident(k)} as b${i}`).join(", ");
  // (a0 < b0) or (a0 = b0 and (a1 < b1 or (a1 = b1 and …))): strictly increasing, null-free keys
  const less = (i: number): string =>
    i === key.length - 1 ? `a${i} < b${i}` : `(a${i} < b${i} or (a${i} = b${i} and ${less(i + 1)}))`;
  const notNull = key.map((_, i) => `a${i} is not null and b${i} is not null`).join(" and ");
  const [[ordered]] = (await readColumns(
    conn,
    `select count(*) filter (where not coalesce(${notNull} and ${less(0)}, false)) = 0 from (select ${a} ` +
      `from ${ident(table)}) positional join (select ${b} from ${ident(table)} offset 1) ` +
      `where ${key.map((_, i) => `b${i} is not null`).join(" or ")}`, // the last row's partner is the padding
  )) as [boolean[]];
  return ordered;
}

/** `cellCheck` on a typed column: what still can be wrong once its value converted. */
function typedChecks(c: ColumnSpec, v: string): string[] {
  const out: string[] = [];
  if (c.required) out.push(`${v} is null`);
  if (c.type === "number") {
    out.push(`not isfinite(${v})`);
    if (c.check === "positive") out.push(`${v} <= 0`);
    if (c.check === "nonnegative") out.push(`${v} < 0`);
    if (c.check === "rating") out.push(`(${v} < 0 or ${v} > 10)`);
  }
  return out;
}

/**
 * The rows of staged `<raw>_n` that fail a check or repeat a key (the first MAX_REPORTED, by file
 * and row), and how many there are in all. `bad`, `dup`: whether any does, so a clean table runs
 * neither query.
 */
async function rejectedRows(
  conn: Conn,
  spec: TableSpec,
  raw: string,
  plan: { checks: { column: string; reason: string; cond: string }[]; keyExpr: string; bad: boolean; dup: boolean },
): Promise<{ rejects: RejectedRow[]; rejectCount: number }> {
  const { checks, keyExpr, bad, dup } = plan;
  const b = new Binds();
  const union = [
    ...(bad
      ? checks.map(
          (k) =>
            `select filename, __row, ${b.v(k.column)}::varchar as col, ${b.v(k.reason)}::varchar as reason ` +
            `from ${raw}_n where ${k.cond}`,
        )
      : []),
    ...(dup
      ? [
          // Repeats of a key: every occurrence after the first, naming where the first was. The
          // window runs only over keys a cheap GROUP BY found repeated.
          `select filename, __row, ${b.v(spec.key.join("+"))}::varchar as col,
              'duplicate key, first at row ' || first_row as reason from (
       select filename, __row, first_value(__row) over (partition by ${keyExpr} order by filename, __row) as first_row,
              row_number() over (partition by ${keyExpr} order by filename, __row) as k
       from ${raw}_n where (${keyExpr}) in (select (${keyExpr}) from ${raw}_n group by all having count(*) > 1)
     ) where k > 1`,
        ]
      : []),
  ];
  const counted = union.length
    ? await readColumns(
        conn,
        `select filename, __row, col, reason, count(*) over () as n from (${union.join(" union all ")}) order by ` +
          `filename, __row, col limit ${MAX_REPORTED}`,
        b.params,
      )
    : [];
  // An empty result has no column arrays at all.
  const [files = [], rowNos = [], cols = [], reasons = [], ns = []] = counted as [
    string[],
    number[],
    string[],
    string[],
    bigint[],
  ];
  const rejects: RejectedRow[] = [];
  for (let i = 0; i < files.length; i++)
    rejects.push({ file: basename(files[i]), row: Number(rowNos[i]), column: cols[i], reason: reasons[i] });
  return { rejects, rejectCount: ns.length ? Number(ns[0]) : 0 };
}

/**
 * Loads `loc` into table `spec.table` of `conn` when it is clean. Rejects are returned, not
 * thrown, so the caller can report every table's problems at once.
 */
export async function loadTable(conn: Conn, spec: TableSpec, loc: LocatedTable): Promise<LoadResult> {
  if (loc.files.length === 1) {
    const clean = await loadIfClean(conn, spec, loc);
    if (clean) return clean;
  }
  const raw = `raw_${spec.table}`;
  await stageFiles(conn, raw, loc);
  const file = loc.files.length === 1 ? basename(loc.files[0]) : `${spec.table}/`;
  const { missing, checks, keyExpr, anyBad, dupKeys, typed, tickerExpr } = await planChecks(
    conn,
    spec,
    `${raw}_n`,
    file,
  );
  if (missing.length) {
    await dropStaged(conn, raw, loc);
    return { rejects: [...missing], rejectCount: missing.length, rowCount: 0, tickers: false };
  }
  const [[bad], [dup]] = (await readColumns(conn, `select ${anyBad}, ${dupKeys}`)) as [boolean[], boolean[]];
  const { rejects, rejectCount } = await rejectedRows(conn, spec, raw, { checks, keyExpr, bad, dup });
  const rowCount = Number((await readColumns(conn, `select count(*) from ${raw}_n`))[0][0]);
  if (rejectCount === 0)
    await conn.run(`create or replace table ${spec.table} as select ${typed.join(", ")} from ${raw}_n order by __row`);
  if (tickerExpr) await tickerCounts(conn, spec.table, `${raw}_n`, tickerExpr);
  await dropStaged(conn, raw, loc);
  return { rejects, rejectCount, rowCount, tickers: tickerExpr !== null };
}

/**
 * `<table>_tickers`: distinct tickers with their row counts, made even when rows are rejected, so
 * unknown tickers are reported in the same round as row errors.
 */
async function tickerCounts(conn: Conn, table: string, relation: string, tickerExpr: string): Promise<void> {
  await conn.run(
    `create or replace temp table ${table}_tickers as select upper(trim(${tickerExpr})) as ticker, count(*) as n ` +
      `from ${relation} where ${tickerExpr} is not null group by 1`,
  );
}

/** Keys compare on their typed value, so `AAPL` and ` aapl` are the same ticker. */
function typedOrText(spec: TableSpec, name: string, value: (c: ColumnSpec) => string): string {
  const c = spec.columns.find((x) => x.name === name)!;
  return c.type === "string" && c.name === "ticker"
    ? `upper(trim(${value(c)}))`
    : c.type === "date"
      ? `try_cast(${value(c)} as date)`
      : value(c);
}
