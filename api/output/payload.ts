// A response body in both formats, serialized only for the format asked.
import type { Response } from "express";
import { encodeForAsync } from "./compress.ts";
import { columnsOf, type FlatRow, metricsCsv, objectsCsv, seriesCsv, toCsv } from "./csv.ts";

export interface Payload {
  json(): string;
  csv(): string;
}

export type Format = "json" | "csv";

export const objectsPayload = (data: object | object[], csvColumns: readonly string[] = []): Payload => ({
  json: () => JSON.stringify(data),
  csv: () => objectsCsv(data, csvColumns),
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
});

export const seriesPayload = (series: Parameters<typeof seriesCsv>[0]): Payload => ({
  json: () => JSON.stringify(series),
  csv: () => seriesCsv(series),
});

export const metricsPayload = (rows: Record<string, string>[]): Payload => ({
  json: () => JSON.stringify(rows),
  csv: () => metricsCsv(rows),
});

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
const CACHE_CONTROL = "private, no-cache";
