// What a bulk export asks for (GET /data/v1/export/:table): its query parameters as one zod schema,
// and the scopes each table needs (read by the export route and by the OpenAPI document).
import { z } from "zod";
import type { Scope } from "../../pipeline/store/catalog/types.ts";
import type { ExportTable } from "../../pipeline/store/read/export-tables.ts";
import { RESOURCE_SCOPES } from "../resources/scopes.ts";
import { isValidDate } from "./params.ts";

/** Each table needs the scopes of the REST endpoints serving the same data. */
export const EXPORT_SCOPES: Record<ExportTable, readonly Scope[]> = {
  ratings: RESOURCE_SCOPES.stockRatings,
  prices: RESOURCE_SCOPES.stockAnalytics, // the stock returns' source
  stock_returns: RESOURCE_SCOPES.stockAnalytics,
  stock_metrics: RESOURCE_SCOPES.stockAnalytics,
  portfolio_holdings: RESOURCE_SCOPES.portfolios,
  portfolio_returns: RESOURCE_SCOPES.portfolioAnalytics,
  portfolio_metrics: RESOURCE_SCOPES.portfolioAnalytics,
  financial_income: RESOURCE_SCOPES.stockFinancials,
  financial_balance: RESOURCE_SCOPES.stockFinancials,
  financial_cashflow: RESOURCE_SCOPES.stockFinancials,
  financial_derived: RESOURCE_SCOPES.stockFinancials,
};

const msg = (m: string) => ({ error: m });
const TICKER = /^[A-Za-z0-9.\-^=_]{1,20}$/;
const MAX_TICKERS = 10_000;
const MAX_COLUMNS = 1_000;

/** A parameter given once (text) or repeated (a list): every value, each split at commas when asked. */
const listOf = (v: string | string[], split: boolean) =>
  (Array.isArray(v) ? v : [v]).flatMap((s) => (split ? s.split(",") : [s])).map((s) => s.trim());

const textOrList = (what: string) => z.union([z.string(), z.array(z.string())], msg(`must be ${what}`)).optional();

const exportDate = (which: string) =>
  z
    .string(msg("must be a date YYYY-MM-DD"))
    .refine(isValidDate, msg("must be a valid calendar date YYYY-MM-DD"))
    .optional()
    .meta({ description: `${which} of the table's date column, inclusive (YYYY-MM-DD)` });

export const exportQuery = z
  .object({
    format: z
      .enum(["arrow", "parquet"], msg('must be "arrow" or "parquet"'))
      .default("arrow")
      .meta({ description: "arrow: an Arrow IPC stream (default); parquet: one Parquet file (zstd)" }),
    tickers: textOrList("a comma-separated list of tickers")
      .transform((v, ctx) => {
        if (v === undefined) return undefined;
        const list = listOf(v, true);
        const bad = list.find((t) => !TICKER.test(t));
        if (bad !== undefined || list.length > MAX_TICKERS) {
          ctx.addIssue({
            code: "custom",
            message:
              bad !== undefined
                ? `not a ticker: ${JSON.stringify(bad.slice(0, 40))}`
                : `at most ${MAX_TICKERS} tickers`,
          });
          return z.NEVER;
        }
        return [...new Set(list.map((t) => t.toUpperCase()))];
      })
      .meta({ description: "Comma-separated tickers (case-insensitive); default every ticker" }),
    start_date: exportDate("First day"),
    end_date: exportDate("Last day"),
    columns: textOrList("column names")
      .transform((v, ctx) => {
        if (v === undefined) return undefined;
        const list = listOf(v, false);
        if (list.length > MAX_COLUMNS || list.some((c) => c.length === 0 || c.length > 200)) {
          ctx.addIssue({ code: "custom", message: "column names of 1 to 200 characters, at most 1,000" });
          return z.NEVER;
        }
        return list;
      })
      .meta({
        description:
          "Columns to keep, in this order: comma-separated, or the parameter repeated (a name holding a comma, " +
          "such as a statement item, is given whole); default all of the table's",
      }),
  })
  .refine((q) => !q.start_date || !q.end_date || q.start_date <= q.end_date, {
    path: ["end_date"],
    message: "must not be before start_date",
  });

export type ExportParams = z.output<typeof exportQuery>;
/** `control`: a control character in the query, refused first of all (as every REST route does). */
export type Parsed = { ok: true; params: ExportParams } | { ok: false; issues: z.core.$ZodIssue[]; control?: boolean };
