// Source records to interface statement rows: the interface's keys in order, money as integers,
// and the items the free SimFin files lack filled in from accounting identities.

import { EXTRA_COLUMNS, ITEMS, PERIOD_KEYS, SHARES_BASIC, SHARES_DILUTED, type Statement, TOTALS } from "./items.ts";
import type { FinancialRow } from "./rows.ts";
import type { SourceRecord } from "./simfin-csv.ts";

/** One statement of one period, with what the derived figures need beyond the row. */
export interface Period {
  fiscalYear: number;
  /** FY / Q1..Q4 as in the source; for a TTM period, the quarter it ends with. */
  fiscalPeriod: string;
  reportDate: string;
  publishDate: string | null;
  restatedDate: string | null;
  sharesBasic: number | null;
  sharesDiluted: number | null;
  /** Interface row; `Fiscal Period` reads `TTM` on TTM rows. */
  row: FinancialRow;
}

/** Numeric source columns to read for a statement. */
export const sourceColumns = (s: Statement): string[] => [...ITEMS[s], ...EXTRA_COLUMNS[s]];

/**
 * Residual identities `[item, total, parts]`: item = total − Σ parts, used when the item's cell is
 * empty or its column absent. Needs the total; an empty part is a line not reported, so 0.
 * Order matters: Equity Before Minority Interest is filled before Other Equity uses it.
 */
export const RESIDUALS: Record<Statement, [string, string, string[]][]> = {
  income: [],
  balance: [
    [
      "Other Short Term Assets",
      "Total Current Assets",
      ["Cash, Cash Equivalents & Short Term Investments", "Accounts & Notes Receivable", "Inventories"],
    ],
    [
      "Other Long Term Assets",
      "Total Noncurrent Assets",
      ["Property, Plant & Equipment, Net", "Long Term Investments & Receivables"],
    ],
    ["Other Short Term Liabilities", "Total Current Liabilities", ["Payables & Accruals", "Short Term Debt"]],
    ["Other Long Term Liabilities", "Total Noncurrent Liabilities", ["Long Term Debt"]],
    // SimFin: Total Equity = Equity Before Minority Interest + Minority Interest.
    ["Equity Before Minority Interest", "Total Equity", ["Minority Interest"]],
    // SimFin: Equity Before Minority Interest = Share Capital & APIC + Treasury Stock + Retained Earnings + Other
    // Equity.
    [
      "Other Equity",
      "Equity Before Minority Interest",
      ["Share Capital & Additional Paid-In Capital", "Treasury Stock", "Retained Earnings"],
    ],
  ],
  cashflow: [
    [
      "Other Investing Activities",
      "Net Cash from Investing Activities",
      [
        "Change in Fixed Assets & Intangibles",
        "Net Change in Long Term Investment",
        "Net Cash from Acquisitions & Divestitures",
      ],
    ],
    [
      "Other Financing Activities",
      "Net Cash from Financing Activities",
      ["Dividends Paid", "Cash from (Repayment of) Debt", "Cash from (Repurchase of) Equity"],
    ],
  ],
};

const COLUMNS = {
  income: sourceColumns("income"),
  balance: sourceColumns("balance"),
  cashflow: sourceColumns("cashflow"),
};
const indexIn = (s: Statement, name: string) => COLUMNS[s].indexOf(name);
const RESIDUAL_INDEX = Object.fromEntries(
  (["income", "balance", "cashflow"] as const).map((s) => [
    s,
    RESIDUALS[s].map(
      ([item, total, parts]) => [indexIn(s, item), indexIn(s, total), parts.map((p) => indexIn(s, p))] as const,
    ),
  ]),
) as Record<Statement, (readonly [number, number, number[]])[]>;
// Rows are cloned from one template per statement: the same keys in the same order make every
// row share V8's fast object shape, which keeps the 20k-row files quick.
const TEMPLATE = Object.fromEntries(
  (["income", "balance", "cashflow"] as const).map((s) => [
    s,
    Object.fromEntries([...PERIOD_KEYS, ...ITEMS[s]].map((k) => [k, null])),
  ]),
) as Record<Statement, FinancialRow>;

/** `rec.values` must follow `sourceColumns(s)`. */
export function statementPeriod(s: Statement, rec: SourceRecord): Period {
  const v = rec.values.map((x) => (x === null ? null : Math.round(x)));
  for (const [item, total, parts] of RESIDUAL_INDEX[s]) {
    const t = v[total];
    if (v[item] !== null || t === null) continue;
    v[item] = parts.reduce((acc, p) => acc - (v[p] ?? 0), t);
  }
  const row: FinancialRow = { ...TEMPLATE[s] };
  row["Fiscal Year"] = rec.fiscalYear;
  row["Fiscal Period"] = rec.fiscalPeriod;
  row["Report Date"] = rec.reportDate;
  const items = ITEMS[s];
  for (let j = 0; j < items.length; j++) row[items[j]] = v[j]; // items lead sourceColumns
  return {
    fiscalYear: rec.fiscalYear,
    fiscalPeriod: rec.fiscalPeriod,
    reportDate: rec.reportDate,
    publishDate: rec.publishDate,
    restatedDate: rec.restatedDate,
    sharesBasic: rec.values[indexIn(s, SHARES_BASIC)],
    sharesDiluted: rec.values[indexIn(s, SHARES_DILUTED)],
    row,
  };
}

/**
 * An item of a period for a formula: null when the statement is missing; an empty total is null;
 * an empty line counts as 0 (see TOTALS).
 */
export function item(p: Period | undefined, key: string): number | null {
  if (!p) return null;
  const x = p.row[key];
  if (typeof x === "number") return x;
  return TOTALS.has(key) ? null : 0;
}

/** Ascending by Report Date, then fiscal year and period, so equal dates order stably. */
export function byReportDate(a: Period, b: Period): number {
  return a.reportDate < b.reportDate
    ? -1
    : a.reportDate > b.reportDate
      ? 1
      : a.fiscalYear - b.fiscalYear || (a.fiscalPeriod < b.fiscalPeriod ? -1 : a.fiscalPeriod > b.fiscalPeriod ? 1 : 0);
}
