// A response body in every format, serialized only for the format asked.
import type { Response } from "express";
import { RATING_CAMEL, RATING_NAMES } from "../../pipeline/types.ts";
import { ARROW_STREAM_TYPE, type ColumnKind, DATE, rowsToArrow } from "./arrow.ts";
import { encodeForAsync } from "./compress.ts";
import { columnsOf, type FlatRow, flatten, metricsCsv, objectsCsv, seriesCsv, seriesRows, toCsv } from "./csv.ts";

export interface Payload {
  json(): string;
  csv(): string;
  /** Arrow IPC stream of the CSV's rows, typed (output/arrow.ts). */
  arrow(): Uint8Array;
  /** A page of a list: the whole list's length (the paging headers, api/rest/paging.ts). */
  total?: number;
}

export type Format = "json" | "csv" | "arrow";

/** Columns the JSON carries as number text: typed as float64 in Arrow. */
const KINDS: Record<string, ColumnKind> = Object.fromEntries([
  ...RATING_NAMES.map((n) => [RATING_CAMEL[n], "numeric-text"]),
  ["stock.marketCap", "numeric-text"],
  ["maxSectorConcentration", "numeric-text"],
]);

function objectsArrow(data: object | object[], base: readonly string[]): Uint8Array {
  const list = Array.isArray(data) ? data : [data];
  const rows = list.map((o) => flatten(o as Record<string, unknown>));
  return rowsToArrow(rows, columnsOf(rows, base), KINDS);
}

export const objectsPayload = (data: object | object[], csvColumns: readonly string[] = []): Payload => ({
  json: () => JSON.stringify(data),
  csv: () => objectsCsv(data, csvColumns),
  arrow: () => objectsArrow(data, csvColumns),
});

/** A list whose items are already serialized JSON texts (hot paths). */
export const preserializedList = (
  items: { json: string; value: object }[],
  csvColumns: readonly string[],
): Payload => ({
  json: () => `[${items.map((i) => i.json).join(",")}]`,
  csv: () =>
    objectsCsv(
      items.map((i) => i.value),
      csvColumns,
    ),
  arrow: () =>
    objectsArrow(
      items.map((i) => i.value),
      csvColumns,
    ),
});

export const seriesPayload = (series: Parameters<typeof seriesCsv>[0]): Payload => ({
  json: () => JSON.stringify(series),
  csv: () => seriesCsv(series),
  arrow: () => {
    const { rows, columns } = seriesRows(series);
    return rowsToArrow(rows, columns);
  },
});

export const metricsPayload = (rows: Record<string, string>[]): Payload => ({
  json: () => JSON.stringify(rows),
  csv: () => metricsCsv(rows),
  arrow: () => metricsArrow(rows),
});

/**
 * Metric rows in Arrow: `metric`, then per column of the table (the subject, the benchmark) its
 * figure as float64 (percentages as fractions: "12.5%" is 0.125; null where the text is no number,
 * as the period dates and "-") and the published text beside it as `<column>.display`.
 */
function metricsArrow(rows: Record<string, string>[]): Uint8Array {
  const names = columnsOf(rows, ["metric"]).slice(1);
  const kinds: Record<string, ColumnKind> = {};
  for (const n of names) {
    kinds[n] = "numeric-text";
    kinds[`${n}.display`] = "utf8";
  }
  const flat = rows.map((r) => {
    const out: FlatRow = { metric: r.metric };
    for (const n of names) {
      out[n] = r[n] ?? null;
      out[`${n}.display`] = r[n] ?? null;
    }
    return out;
  });
  return rowsToArrow(flat, ["metric", ...names.flatMap((n) => [n, `${n}.display`])], { metric: "utf8", ...kinds });
}

export const FINANCIAL_CSV_COLUMNS = ["statement", "Fiscal Year", "Fiscal Period", "Report Date", "item", "value"];

export const longRowsPayload = (
  json: object,
  rows: () => Record<string, unknown>[],
  base: readonly string[],
): Payload => ({
  json: () => JSON.stringify(json),
  csv: () => {
    const r = rows() as FlatRow[];
    return toCsv(r, columnsOf(r, base));
  },
  arrow: () => longRowsArrow(rows() as FlatRow[], base),
});

/**
 * The long rows in Arrow. One typed column cannot hold both the statements' numbers (and the
 * derived ratios' 4-decimal texts) and the date-valued items (`Publish Date`, `Restated Date`):
 * numbers go to `value` (float64), dates to `value.date` (date32), each null where the other holds.
 */
function longRowsArrow(rows: FlatRow[], base: readonly string[]): Uint8Array {
  const split = rows.map((r) => {
    const v = r.value;
    const date = typeof v === "string" && DATE.test(v);
    return { ...r, value: date ? null : v, "value.date": date ? v : null };
  });
  return rowsToArrow(split, [...columnsOf(rows, base), "value.date"], { value: "numeric-text", "value.date": "date" });
}

/**
 * The wide layout of statement rows (one row per period, one column per item): CSV as the values
 * are, Arrow with each item column typed from its values (dates date32, numbers and the derived
 * ratios' texts float64).
 */
export const wideRowsPayload = (json: object, wide: () => { rows: Record<string, unknown>[]; columns: string[] }) => ({
  json: () => JSON.stringify(json),
  csv: () => {
    const { rows, columns } = wide();
    return toCsv(rows as FlatRow[], columns);
  },
  arrow: () => {
    const { rows, columns } = wide();
    const kinds: Record<string, ColumnKind> = {};
    for (const c of columns.slice(3)) {
      const present = rows.map((r) => r[c]).filter((v) => v !== null && v !== undefined);
      kinds[c] =
        present.length > 0 && present.every((v) => typeof v === "string" && DATE.test(v)) ? "date" : "numeric-text";
    }
    return rowsToArrow(rows as FlatRow[], columns, kinds);
  },
});

/**
 * Writes a 200 with every header in one writeHead object. Nothing is set on `res` before: Node's
 * writeHead takes a slow path (setHeader per field, each validated twice) once any header was set.
 */
export function sendBody(
  res: Response,
  format: Format,
  filename: string,
  body: Buffer,
  etag: string,
  requestId: string,
  extra?: Record<string, string>,
): void | Promise<void> {
  const headers: Record<string, string | number> =
    format === "csv"
      ? {
          "Content-Type": "text/csv; charset=utf-8",
          "Content-Disposition": `attachment; filename="${filename}.csv"`,
          ETag: etag,
          "Cache-Control": CACHE_CONTROL,
          "X-Request-Id": requestId,
        }
      : format === "arrow"
        ? {
            "Content-Type": ARROW_STREAM_TYPE,
            "Content-Disposition": `attachment; filename="${filename}.arrows"`,
            ETag: etag,
            "Cache-Control": CACHE_CONTROL,
            "X-Request-Id": requestId,
          }
        : {
            "Content-Type": "application/json; charset=utf-8",
            ETag: etag,
            "Cache-Control": CACHE_CONTROL,
            "X-Request-Id": requestId,
          };
  const base = res.locals.baseHeaders as Record<string, string> | undefined; // security headers (app.ts)
  if (base) Object.assign(headers, base);
  if (extra) Object.assign(headers, extra);
  // Content-Length, and Content-Encoding when compressed; a large body's first compression runs off the event loop
  const out = encodeForAsync(res.req, body, headers);
  if (Buffer.isBuffer(out)) return end(res, headers, out);
  return out.then((b) => end(res, headers, b));
}

function end(res: Response, headers: Record<string, string | number>, out: Buffer): void {
  res.writeHead(200, headers);
  res.end(out);
}

export function sendNotModified(res: Response, etag: string, requestId: string, extra?: Record<string, string>): void {
  res.writeHead(304, {
    ETag: etag,
    "Cache-Control": CACHE_CONTROL,
    "X-Request-Id": requestId,
    ...(res.locals.baseHeaders as Record<string, string> | undefined),
    ...extra,
  });
  res.end();
}

/** Revalidate every time (ETag), and never in a shared cache: responses belong to the key's user. */
export const CACHE_CONTROL = "private, no-cache";
