// The stock financials resource: the JSON object of the interface and the contract's CSV long rows.

import { PERIOD_KEYS } from "./items.ts";
import type { CompanyFinancials, FinancialRow, FinancialSet, FinancialType } from "./rows.ts";

export { companyFinancials, emptyFinancials } from "./build.ts";

const TYPE_NAME: Record<FinancialType, string> = { annual: "Annual", quarterly: "Quarterly", ttm: "Ttm" };

/** Array names in response order, with the statement each carries. */
export function financialArrays(type: FinancialType): [name: string, statement: keyof FinancialSet][] {
  const t = TYPE_NAME[type];
  return [
    [`stockIncome${t}Data`, "income"],
    [`stockBalance${t}Data`, "balance"],
    [`stockCashFlow${t}Data`, "cashflow"],
    [`stockDerived${t}Data`, "derived"],
  ];
}

/** `{id, ticker, name, stock<Statement><Type>Data...}`; a stock without statements gets empty arrays. */
export function financialsResponse(
  company: { id: string; ticker: string; name: string },
  fin: CompanyFinancials | undefined,
  type: FinancialType,
): Record<string, unknown> {
  const out: Record<string, unknown> = { id: company.id, ticker: company.ticker, name: company.name };
  for (const [name, statement] of financialArrays(type)) out[name] = fin?.[type][statement] ?? [];
  return out;
}

/**
 * Long CSV rows `statement, Fiscal Year, Fiscal Period, Report Date, item, value`: one per item of
 * every row, statements in response order and items in row order.
 */
export function financialsLongRows(resp: Record<string, unknown>, type: FinancialType): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const [name, statement] of financialArrays(type)) {
    for (const row of (resp[name] as FinancialRow[] | undefined) ?? []) {
      const period = {
        "Fiscal Year": row["Fiscal Year"],
        "Fiscal Period": row["Fiscal Period"],
        "Report Date": row["Report Date"],
      };
      for (const [item, value] of Object.entries(row)) {
        if ((PERIOD_KEYS as readonly string[]).includes(item)) continue;
        out.push({ statement, ...period, item, value });
      }
    }
  }
  return out;
}

/**
 * Wide rows (`layout=wide`): one per period (`Fiscal Year`, `Fiscal Period`, `Report Date`), then one
 * column per item named `<statement>.<item>` (an item name may recur in two statements), statements
 * in response order and periods in the order first met. A period a statement lacks leaves its cells empty.
 */
export function financialsWideRows(
  resp: Record<string, unknown>,
  type: FinancialType,
): { rows: Record<string, unknown>[]; columns: string[] } {
  const byPeriod = new Map<string, Record<string, unknown>>();
  const columns: string[] = [...PERIOD_KEYS];
  const seen = new Set(columns);
  for (const [name, statement] of financialArrays(type)) {
    for (const row of (resp[name] as FinancialRow[] | undefined) ?? []) {
      const key = JSON.stringify([row["Fiscal Year"], row["Fiscal Period"]]);
      let out = byPeriod.get(key);
      if (!out) {
        out = {
          "Fiscal Year": row["Fiscal Year"],
          "Fiscal Period": row["Fiscal Period"],
          "Report Date": row["Report Date"],
        };
        byPeriod.set(key, out);
      }
      for (const [item, value] of Object.entries(row)) {
        if ((PERIOD_KEYS as readonly string[]).includes(item)) continue;
        const column = `${statement}.${item}`;
        out[column] = value;
        if (!seen.has(column)) {
          seen.add(column);
          columns.push(column);
        }
      }
    }
  }
  return { rows: [...byPeriod.values()], columns };
}
