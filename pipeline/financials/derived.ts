// The derived array: SimFin's derived figures computed from one period's three statements (and,
// for the F-Score, the same kind of period a year earlier). Every formula: docs/financials.md.

import { DERIVED_KEYS, DERIVED_MONEY, DERIVED_RATIOS, div, F_SCORE, ratio } from "./items.ts";
import { type FScoreInputs, piotroskiFScore } from "./piotroski.ts";
import type { FinancialRow, FinancialType } from "./rows.ts";
import type { SourceRecord } from "./simfin-csv.ts";
import { byReportDate, item, type Period } from "./statements.ts";

/** One period's statements; any may be missing. */
export interface PeriodSet {
  income?: Period;
  balance?: Period;
  cashflow?: Period;
}

const add = (a: number | null, b: number | null) => (a === null || b === null ? null : a + b);
const neg = (a: number | null) => (a === null ? null : -a);

function fScoreInputs(s: PeriodSet): FScoreInputs {
  const { income: i, balance: b, cashflow: c } = s;
  return {
    netIncome: item(i, "Net Income (Common)"),
    operatingCashFlow: item(c, "Net Cash from Operating Activities"),
    totalAssets: item(b, "Total Assets"),
    longTermDebt: item(b, "Long Term Debt"),
    currentAssets: item(b, "Total Current Assets"),
    currentLiabilities: item(b, "Total Current Liabilities"),
    sharesBasic: shares(s, "sharesBasic"),
    grossProfit: item(i, "Gross Profit"),
    revenue: item(i, "Revenue"),
  };
}

/** Share counts come with every SimFin statement; the income statement's are preferred. */
function shares(s: PeriodSet, which: "sharesBasic" | "sharesDiluted"): number | null {
  return s.income?.[which] ?? s.balance?.[which] ?? s.cashflow?.[which] ?? null;
}

const DERIVED_TEMPLATE: FinancialRow = Object.fromEntries(DERIVED_KEYS.map((k) => [k, null]));

export function derivedRow(s: PeriodSet, prior: PeriodSet | undefined): FinancialRow {
  const { income: i, balance: b, cashflow: c } = s;
  const first = (i ?? c ?? b)!;
  const revenue = item(i, "Revenue");
  const ebit = item(i, "Operating Income (Loss)");
  const netIncome = item(i, "Net Income (Common)");
  const equity = item(b, "Total Equity");
  const assets = item(b, "Total Assets");
  const basic = shares(s, "sharesBasic");
  const ebitda = add(ebit, item(c, "Depreciation & Amortization"));
  const totalDebt = add(item(b, "Short Term Debt"), item(b, "Long Term Debt"));
  const fcf = add(item(c, "Net Cash from Operating Activities"), item(c, "Change in Fixed Assets & Intangibles"));
  const dividends = neg(item(c, "Dividends Paid")); // paid is negative in SimFin
  const netDebt = add(totalDebt, neg(item(b, "Cash, Cash Equivalents & Short Term Investments")));
  const investedCapital = add(equity, totalDebt);
  const restated = [i, b, c].reduce<string | null>(
    (m, p) => (p?.restatedDate && (m === null || p.restatedDate > m) ? p.restatedDate : m),
    null,
  );

  const row: FinancialRow = { ...DERIVED_TEMPLATE }; // one key order, one object shape (see statements.ts)
  row["Fiscal Year"] = first.fiscalYear;
  row["Fiscal Period"] = first.row["Fiscal Period"];
  row["Report Date"] = first.reportDate;
  row["Publish Date"] = first.publishDate;
  row["Restated Date"] = restated;
  row.EBITDA = ebitda;
  row["Total Debt"] = totalDebt;
  row["Free Cash Flow"] = fcf;
  row["Gross Profit Margin"] = ratio(div(item(i, "Gross Profit"), revenue));
  row["Operating Margin"] = ratio(div(ebit, revenue));
  row["Net Profit Margin"] = ratio(div(netIncome, revenue));
  row["Return on Equity"] = ratio(div(netIncome, equity));
  row["Return on Assets"] = ratio(div(netIncome, assets));
  row["Free Cash Flow to Net Income"] = ratio(div(fcf, netIncome));
  row["Current Ratio"] = ratio(div(item(b, "Total Current Assets"), item(b, "Total Current Liabilities")));
  row["Liabilities to Equity Ratio"] = ratio(div(item(b, "Total Liabilities"), equity));
  row["Debt Ratio"] = ratio(div(totalDebt, assets));
  row["Earnings Per Share, Basic"] = ratio(div(netIncome, basic));
  row["Earnings Per Share, Diluted"] = ratio(div(netIncome, shares(s, "sharesDiluted")));
  row["Sales Per Share"] = ratio(div(revenue, basic));
  row["Equity Per Share"] = ratio(div(equity, basic));
  row["Free Cash Flow Per Share"] = ratio(div(fcf, basic));
  row["Dividends Per Share"] = ratio(div(dividends, basic));
  row[F_SCORE] = piotroskiFScore(fScoreInputs(s), prior && fScoreInputs(prior));
  row["Return On Invested Capital"] = ratio(div(netIncome, investedCapital));
  row["Cash Return On Invested Capital"] = ratio(div(fcf, investedCapital));
  row["Dividend Payout Ratio"] = ratio(div(dividends, netIncome));
  row["Net Debt / EBITDA"] = ratio(div(netDebt, ebitda));
  row["Net Debt / EBIT"] = ratio(div(netDebt, ebit));
  return row;
}

/**
 * Joins the statements period by period and derives each. Annual periods join on the fiscal year
 * (SimFin's annual balance sheet says Q4 where the flows say FY); quarterly and TTM periods on
 * year and quarter. The F-Score compares with the same key one fiscal year earlier.
 */
export function derivedRows(
  type: FinancialType,
  income: Period[],
  balance: Period[],
  cashflow: Period[],
): FinancialRow[] {
  const key = (fy: number, p: Period) => (type === "annual" ? `${fy}` : `${fy}|${p.fiscalPeriod}`);
  const sets = new Map<string, PeriodSet>();
  const put = (name: keyof PeriodSet, ps: Period[]) => {
    for (const p of ps) {
      const k = key(p.fiscalYear, p);
      sets.set(k, { ...sets.get(k), [name]: p });
    }
  };
  put("income", income);
  put("balance", balance);
  put("cashflow", cashflow);
  const out: { p: Period; row: FinancialRow }[] = [];
  for (const s of sets.values()) {
    const p = (s.income ?? s.cashflow ?? s.balance)!;
    out.push({ p, row: derivedRow(s, sets.get(key(p.fiscalYear - 1, p))) });
  }
  return out.sort((a, b) => byReportDate(a.p, b.p)).map((x) => x.row);
}

/** Numeric columns of a `us-derived-*.csv` file. */
export const DERIVED_SOURCE_COLUMNS: string[] = [...DERIVED_MONEY, F_SCORE, ...DERIVED_RATIOS];

const ordered = (v: FinancialRow): FinancialRow => {
  const row = { ...DERIVED_TEMPLATE };
  for (const k of DERIVED_KEYS) row[k] = v[k] ?? null;
  return row;
};

/** A row of a given derived file (values in DERIVED_SOURCE_COLUMNS order) in the interface's form. */
export function derivedFromRecord(rec: SourceRecord): FinancialRow {
  const v = (k: string) => rec.values[DERIVED_SOURCE_COLUMNS.indexOf(k)];
  const round = (x: number | null) => (x === null ? null : Math.round(x));
  const values: FinancialRow = {
    "Fiscal Year": rec.fiscalYear,
    "Fiscal Period": rec.fiscalPeriod,
    "Report Date": rec.reportDate,
    "Publish Date": rec.publishDate,
    "Restated Date": rec.restatedDate,
    [F_SCORE]: round(v(F_SCORE)),
  };
  for (const k of DERIVED_MONEY) values[k] = round(v(k));
  for (const k of DERIVED_RATIOS) values[k] = ratio(v(k));
  return ordered(values);
}
