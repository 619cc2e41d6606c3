// CSV writer (RFC 4180: CRLF, quoted when needed, header row) and the contract §3 flattening:
// nested objects → dotted columns, arrays → JSON text in one cell, null → empty cell.
import { stringify } from "csv-stringify/sync";

export type Cell = string | number | boolean | null | undefined;
export type FlatRow = Record<string, Cell>;

export function flatten(obj: Record<string, unknown>, prefix = "", out: FlatRow = {}): FlatRow {
  for (const [k, v] of Object.entries(obj)) {
    const col = prefix ? `${prefix}.${k}` : k;
    if (v === null || v === undefined) out[col] = null;
    else if (Array.isArray(v)) out[col] = JSON.stringify(v);
    else if (typeof v === "object") flatten(v as Record<string, unknown>, col, out);
    else out[col] = v as Cell;
  }
  return out;
}

/** Columns: the given ones first, then any other column met in the rows, in first-seen order. */
export function columnsOf(rows: FlatRow[], base: readonly string[] = []): string[] {
  const seen = new Set(base);
  const cols = [...base];
  for (const r of rows)
    for (const k of Object.keys(r))
      if (!seen.has(k)) {
        seen.add(k);
        cols.push(k);
      }
  return cols;
}

// CSV injection (OWASP): a text cell starting with = + - @ tab or CR (or their full-width forms) is
// run as a formula by spreadsheets. Such cells get a leading ' and are quoted. Numbers written as
// text — metric strings such as "-3.43%" or "-1,303.90%", and "-" for a missing metric — are not
// formulas and stay as they are. A cell holding a line break (CR, LF or CRLF) is quoted (RFC 4180:
// unquoted, a reader sees a new row there), and each line inside it that starts a formula gets the
// same ' after the break, for readers that split lines before fields.
const FORMULA_START = /^[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/;
const NUMERIC_TEXT = /^(?:[-+]?(?:\d[\d,]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?%?|-)$/;
const formula = (text: string) => FORMULA_START.test(text) && !NUMERIC_TEXT.test(text);
// A line break (CRLF as one) and what follows it: a CR (a line of its own that starts with CR) or the line's text.
const BREAK_AND_LINE = /(\r\n|\r|\n)(?=(\r(?!\n)|[^\r\n]*))/g;
const BREAK = /[\r\n]/;

/** The cell as written: ' before the cell and before each inner line that starts a formula; quoted when needed. */
export function neutralised(v: string): string | { value: string; quoted: true } {
  if (!BREAK.test(v)) return formula(v) ? { value: `'${v}`, quoted: true } : v;
  const inner = v.replace(BREAK_AND_LINE, (_m, brk: string, line: string) => (formula(line) ? `${brk}'` : brk));
  return { value: formula(v) ? `'${inner}` : inner, quoted: true };
}

export function toCsv(rows: FlatRow[], columns: readonly string[]): string {
  return stringify(rows, {
    header: true,
    columns: columns.map((c) => ({ key: c, header: c })),
    record_delimiter: "windows",
    // with record_delimiter set, csv-stringify quotes only cells holding "\r\n": a lone CR or LF too
    quote_record_delimiter: true,
    // header cells go through `string` too (a benchmark's name is a metrics column)
    cast: {
      boolean: (v: boolean) => (v ? "true" : "false"),
      number: (v: number) => (Number.isFinite(v) ? String(v) : ""),
      string: neutralised,
    },
  });
}

/** Objects (one or a list) → CSV with dotted columns. */
export function objectsCsv(data: object | object[], base: readonly string[] = []): string {
  const list = Array.isArray(data) ? data : [data];
  const rows = list.map((o) => flatten(o as Record<string, unknown>));
  return toCsv(rows, columnsOf(rows, base));
}

interface SeriesLike {
  name: string;
  data: Record<string, number | string>[];
  window?: number;
  bins?: { start: number; end: number; count: number }[];
}

/**
 * Series → long rows `name,date,return`, then the type's extra columns (`year,month` for the
 * heatmap, `window` for rolling series); boxplot rows are `name,period,min,q1,…`; a histogram row
 * also names its bin (`bin_start,bin_end`), so the bins stay recoverable from the CSV.
 */
export function seriesCsv(series: SeriesLike[]): string {
  const { rows, columns } = seriesRows(series);
  return toCsv(rows, columns);
}

/** The long rows of `seriesCsv` and their columns (the Arrow body has the same rows). */
export function seriesRows(series: SeriesLike[]): { rows: FlatRow[]; columns: string[] } {
  const rows: FlatRow[] = [];
  for (const s of series) {
    const bins = s.bins;
    for (const item of s.data) {
      const row: FlatRow = { name: s.name };
      for (const [k, v] of Object.entries(item)) row[k] = v;
      if (s.window !== undefined) row.window = s.window;
      if (bins?.length && typeof item.return === "number") {
        const v = item.return;
        let b = bins.findIndex((x, i) => v >= x.start && (v < x.end || (i === bins.length - 1 && v <= x.end)));
        if (b < 0) b = v < bins[0].start ? 0 : bins.length - 1;
        row.bin_start = bins[b].start;
        row.bin_end = bins[b].end;
      }
      rows.push(row);
    }
  }
  const first = series[0]?.data[0];
  const base = first && "period" in first ? ["name", "period"] : ["name", "date", "return"];
  return { rows, columns: columnsOf(rows, base) };
}

/** Metric rows keep their key order: `metric,<column>[,<benchmark>]`. */
export function metricsCsv(rows: Record<string, string>[]): string {
  return toCsv(rows, columnsOf(rows, ["metric"]));
}
