// The snapshot tables a bulk export serves (`/data/v1/export/{table}`), and how each is read: its
// files, and which column a ticker filter, a date range or a portfolio's visibility applies to.
// Names are from this list only; every value in the SQL is bound (duck.ts `Binds`).
import { readdirSync } from "node:fs";
import { join } from "node:path";
import type { Binds } from "../duck/duck.ts";
import { datedFiles, datedRelation } from "../snapshot/dated-parts.ts";

export interface ExportTableSpec {
  /** The table as one relation over the snapshot folder `dir` (its file names bound in `b`). */
  relation(dir: string, b: Binds): string;
  /** The Parquet files `relation` reads, in its order. */
  files(dir: string): string[];
  /** The column `tickers` filters; none: the parameter is refused for this table. */
  ticker?: string;
  /** The column `start_date` / `end_date` bound; none: refused. */
  date?: string;
  /** The column holding a portfolio id: rows of predefined portfolios and the caller's own only. */
  portfolio?: string;
}

const file = (name: string) => ({
  relation: (dir: string, b: Binds) => `read_parquet(${b.v(join(dir, name))})`,
  files: (dir: string) => [join(dir, name)],
});
const folder = (name: string) => ({
  relation: (dir: string, b: Binds) => `read_parquet(${b.v(join(dir, name, "*.parquet"))})`,
  // the glob's order: file names sorted
  files: (dir: string) =>
    readdirSync(join(dir, name))
      .filter((f) => f.endsWith(".parquet"))
      .sort()
      .map((f) => join(dir, name, f)),
});
const dated = (name: string) => ({
  relation: (dir: string, b: Binds) => datedRelation(dir, name, b),
  files: (dir: string) => datedFiles(dir, name),
});

export const EXPORT_TABLES = {
  ratings: { ...dated("ratings"), ticker: "ticker", date: "date" },
  prices: { ...dated("prices"), ticker: "ticker", date: "date" },
  stock_returns: { ...folder("stock_returns"), ticker: "id", date: "date" },
  stock_metrics: { ...folder("stock_metrics"), ticker: "subject" },
  portfolio_holdings: { ...file("holdings.parquet"), ticker: "ticker", date: "date", portfolio: "portfolio_id" },
  portfolio_returns: { ...file("portfolio_returns.parquet"), date: "date", portfolio: "id" },
  portfolio_metrics: { ...file("portfolio_metrics.parquet"), portfolio: "subject" },
  financial_income: { ...folder("financial_income"), ticker: "ticker", date: "Report Date" },
  financial_balance: { ...folder("financial_balance"), ticker: "ticker", date: "Report Date" },
  financial_cashflow: { ...folder("financial_cashflow"), ticker: "ticker", date: "Report Date" },
  financial_derived: { ...folder("financial_derived"), ticker: "ticker", date: "Report Date" },
} as const satisfies Record<string, ExportTableSpec>;

export type ExportTable = keyof typeof EXPORT_TABLES;
export const EXPORT_TABLE_NAMES = Object.keys(EXPORT_TABLES) as ExportTable[];

export const isExportTable = (t: string): t is ExportTable => Object.hasOwn(EXPORT_TABLES, t);

/** The spec of a table, as the wider interface (optional columns readable on every table). */
export const exportSpec = (t: ExportTable): ExportTableSpec => EXPORT_TABLES[t];
