// Column specifications of the source tables (contract §2). One spec per table; the generic
// loader validates every table the same way.
import { RATING_NAMES } from "../types.ts";

export type ColType = "string" | "date" | "number";
export type ColCheck = "positive" | "nonnegative" | "rating";

export interface ColumnSpec {
  name: string;
  /** Other header names accepted for this column (case-insensitive). */
  aliases?: string[];
  type: ColType;
  required: boolean;
  check?: ColCheck;
}

export interface TableSpec {
  table: string;
  columns: ColumnSpec[];
  /** Columns that identify a row; a repeat is rejected. */
  key: string[];
  /** Required tables make a run fail when absent. */
  required: boolean;
}

export const COMPANIES: TableSpec = {
  table: "companies",
  required: true,
  key: ["ticker"],
  columns: [
    { name: "id", type: "string", required: false },
    { name: "ticker", aliases: ["symbol"], type: "string", required: true },
    { name: "name", type: "string", required: true },
    { name: "sector", type: "string", required: true },
    { name: "industry", type: "string", required: true },
    { name: "shares_outstanding", type: "number", required: false, check: "nonnegative" },
    { name: "market_cap", type: "number", required: false, check: "nonnegative" },
  ],
};

export const PRICES: TableSpec = {
  table: "prices",
  required: true,
  key: ["ticker", "date"],
  columns: [
    { name: "date", type: "date", required: true },
    { name: "ticker", aliases: ["Name"], type: "string", required: true },
    { name: "open", type: "number", required: false, check: "positive" },
    { name: "high", type: "number", required: false, check: "positive" },
    { name: "low", type: "number", required: false, check: "positive" },
    { name: "close", type: "number", required: true, check: "positive" },
    { name: "adj_close", type: "number", required: false, check: "positive" },
    { name: "volume", type: "number", required: false, check: "nonnegative" },
  ],
};

export const RATINGS: TableSpec = {
  table: "ratings",
  required: false,
  key: ["ticker", "date"],
  columns: [
    { name: "date", type: "date", required: true },
    { name: "ticker", type: "string", required: true },
    ...RATING_NAMES.map((name): ColumnSpec => ({ name, type: "number", required: true, check: "rating" })),
  ],
};

export const BENCHMARKS: TableSpec = {
  table: "benchmarks",
  required: false,
  key: ["benchmark", "date"],
  columns: [
    { name: "date", type: "date", required: true },
    { name: "benchmark", type: "string", required: true },
    { name: "close", type: "number", required: true, check: "positive" },
  ],
};

export const TABLE_SPECS = [COMPANIES, PRICES, RATINGS, BENCHMARKS] as const;
