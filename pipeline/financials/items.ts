// The row keys of the interface's four financial arrays, in the interface's order, and which of
// them are totals. Every other module names items through these lists so a key is spelled once.

export type Statement = "income" | "balance" | "cashflow";

/** Leading keys of every statement row. */
export const PERIOD_KEYS = ["Fiscal Year", "Fiscal Period", "Report Date"] as const;

export const INCOME_ITEMS = [
  "Revenue",
  "Cost of Revenue",
  "Gross Profit",
  "Operating Expenses",
  "Operating Income (Loss)",
  "Non-Operating Income (Loss)",
  "Pretax Income (Loss)",
  "Income Tax (Expense) Benefit, Net",
  "Net Income (Common)",
] as const;

export const BALANCE_ITEMS = [
  "Cash, Cash Equivalents & Short Term Investments",
  "Accounts & Notes Receivable",
  "Inventories",
  "Other Short Term Assets",
  "Total Current Assets",
  "Property, Plant & Equipment, Net",
  "Long Term Investments & Receivables",
  "Other Long Term Assets",
  "Total Noncurrent Assets",
  "Total Assets",
  "Payables & Accruals",
  "Short Term Debt",
  "Other Short Term Liabilities",
  "Total Current Liabilities",
  "Long Term Debt",
  "Other Long Term Liabilities",
  "Total Noncurrent Liabilities",
  "Total Liabilities",
  "Share Capital & Additional Paid-In Capital",
  "Retained Earnings",
  "Other Equity",
  "Equity Before Minority Interest",
  "Total Equity",
  "Total Liabilities & Equity",
] as const;

export const CASHFLOW_ITEMS = [
  "Net Income/Starting Line",
  "Depreciation & Amortization",
  "Non-Cash Items",
  "Change in Working Capital",
  "Net Cash from Operating Activities",
  "Change in Fixed Assets & Intangibles",
  "Net Change in Long Term Investment",
  "Net Cash from Acquisitions & Divestitures",
  "Other Investing Activities",
  "Net Cash from Investing Activities",
  "Dividends Paid",
  "Cash from (Repayment of) Debt",
  "Cash from (Repurchase of) Equity",
  "Other Financing Activities",
  "Net Cash from Financing Activities",
  "Net Change in Cash",
] as const;

export const ITEMS: Record<Statement, readonly string[]> = {
  income: INCOME_ITEMS,
  balance: BALANCE_ITEMS,
  cashflow: CASHFLOW_ITEMS,
};

/**
 * Source columns read besides the interface items: share counts for per-share figures, and the
 * balance lines the residual identities need although the interface does not show them.
 */
export const SHARES_BASIC = "Shares (Basic)";
export const SHARES_DILUTED = "Shares (Diluted)";
export const EXTRA_COLUMNS: Record<Statement, readonly string[]> = {
  income: [SHARES_BASIC, SHARES_DILUTED],
  balance: [SHARES_BASIC, SHARES_DILUTED, "Treasury Stock", "Minority Interest"],
  cashflow: [SHARES_BASIC, SHARES_DILUTED],
};

/**
 * Totals and headline figures. An empty cell here is a gap (formulas give null). Every other item
 * is a line of some total: SimFin leaves a line empty when the company reports nothing on it, so
 * inside a formula an empty line of a statement that exists counts as 0.
 */
export const TOTALS = new Set<string>([
  "Revenue",
  "Gross Profit",
  "Operating Expenses",
  "Operating Income (Loss)",
  "Pretax Income (Loss)",
  "Net Income (Common)",
  "Total Current Assets",
  "Total Noncurrent Assets",
  "Total Assets",
  "Total Current Liabilities",
  "Total Noncurrent Liabilities",
  "Total Liabilities",
  "Equity Before Minority Interest",
  "Total Equity",
  "Total Liabilities & Equity",
  "Net Income/Starting Line",
  "Net Cash from Operating Activities",
  "Net Cash from Investing Activities",
  "Net Cash from Financing Activities",
  "Net Change in Cash",
  SHARES_BASIC,
  SHARES_DILUTED,
]);

export const DERIVED_MONEY = ["EBITDA", "Total Debt", "Free Cash Flow"] as const;
export const F_SCORE = "Piotroski F-Score";
export const DERIVED_RATIOS = [
  "Gross Profit Margin",
  "Operating Margin",
  "Net Profit Margin",
  "Return on Equity",
  "Return on Assets",
  "Free Cash Flow to Net Income",
  "Current Ratio",
  "Liabilities to Equity Ratio",
  "Debt Ratio",
  "Earnings Per Share, Basic",
  "Earnings Per Share, Diluted",
  "Sales Per Share",
  "Equity Per Share",
  "Free Cash Flow Per Share",
  "Dividends Per Share",
  "Return On Invested Capital",
  "Cash Return On Invested Capital",
  "Dividend Payout Ratio",
  "Net Debt / EBITDA",
  "Net Debt / EBIT",
] as const;

/** Derived row keys in the interface's order. */
export const DERIVED_KEYS = [
  ...PERIOD_KEYS,
  "Publish Date",
  "Restated Date",
  "EBITDA",
  "Total Debt",
  "Free Cash Flow",
  ...DERIVED_RATIOS.slice(0, 15),
  F_SCORE,
  ...DERIVED_RATIOS.slice(15),
] as const;

/** Decimals of every ratio string (and per-share figure). */
export const RATIO_DECIMALS = 4;

const SCALE = 10 ** RATIO_DECIMALS;

/**
 * A ratio as a fixed-decimal string, rounded half away from zero; null for gaps and non-finite
 * results. Integer arithmetic instead of toFixed: this runs 400k times on the bulk files.
 */
export function ratio(x: number | null): string | null {
  if (x === null || !Number.isFinite(x)) return null;
  const n = Math.round(Math.abs(x) * SCALE);
  if (!Number.isSafeInteger(n)) return x.toFixed(RATIO_DECIMALS);
  const digits = String(n).padStart(RATIO_DECIMALS + 1, "0");
  const cut = digits.length - RATIO_DECIMALS;
  return `${x < 0 && n !== 0 ? "-" : ""}${digits.slice(0, cut)}.${digits.slice(cut)}`;
}

/** a / b, null when either is missing or b is zero. */
export function div(a: number | null, b: number | null): number | null {
  return a === null || b === null || b === 0 ? null : a / b;
}
