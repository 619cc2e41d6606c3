// A response body in both formats, serialized only for the format asked.
import type { Response } from "express";
import { objectsCsv, seriesCsv, metricsCsv, toCsv, columnsOf, type FlatRow } from "./csv.ts";

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
export const preserializedList = (items: { json: string; value: object }[], csvColumns: readonly string[]): Payload => ({
  json: () => `[${items.map((i) => i.json).join(",")}]`,
  csv: () => objectsCsv(items.map((i) => i.value), csvColumns),
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

export const longRowsPayload = (json: object, rows: () => Record<string, unknown>[], base: readonly string[]): Payload => ({
  json: () => JSON.stringify(json),
  csv: () => {
    const r = rows() as FlatRow[];
    return toCsv(r, columnsOf(r, base));
  },
});

export function sendBody(res: Response, format: Format, filename: string, body: Buffer, etag: string): void {
  const headers: Record<string, string | number> =
    format === "csv"
      ? { "Content-Type": "text/csv; charset=utf-8", "Content-Disposition": `attachment; filename="${filename}.csv"` }
      : { "Content-Type": "application/json; charset=utf-8" };
  headers["Content-Length"] = body.length;
  headers.ETag = etag;
  headers["Cache-Control"] = "private, no-cache";
  res.writeHead(200, headers);
  res.end(body);
}

export function sendNotModified(res: Response, etag: string): void {
  res.statusCode = 304;
  res.setHeader("ETag", etag);
  res.setHeader("Cache-Control", "private, no-cache");
  res.end();
}
