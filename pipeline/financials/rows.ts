// The financial statements' rows as the pipeline computes them and the snapshot stores them (its
// model, pipeline/store/snapshot/model.ts, re-exports them for the readers).

/** Financial statement rows per type; keys exactly as the interface's row keys. */
export type FinancialRow = Record<string, string | number | null>;
export interface FinancialSet {
  income: FinancialRow[];
  balance: FinancialRow[];
  cashflow: FinancialRow[];
  derived: FinancialRow[];
}
export type FinancialType = "annual" | "quarterly" | "ttm";
export type CompanyFinancials = Record<FinancialType, FinancialSet>;
