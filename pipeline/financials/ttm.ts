// Trailing-twelve-month periods from quarterly ones: one per quarter that closes a run of four
// consecutive quarters (Q4 of a year is followed by Q1 of the next).
import type { FinancialRow } from "../store/model.ts";
import { ITEMS, TOTALS, type Statement } from "./items.ts";
import type { Period } from "./statements.ts";

const quarterIndex = (p: Period) => p.fiscalYear * 4 + Number(p.fiscalPeriod.slice(1)) - 1;

/**
 * Flows (income, cash flow) are the sum of the four quarters; the balance sheet is the last
 * quarter's. In a sum a total needs all four quarters, while a line is null only when all four are
 * empty (an empty quarter counts 0: nothing reported on that line then).
 */
export function ttmPeriods(s: Statement, quarters: Period[]): Period[] {
  const byIndex = new Map(quarters.map((q) => [quarterIndex(q), q]));
  const out: Period[] = [];
  for (const last of quarters) {
    const i = quarterIndex(last);
    const run = [i - 3, i - 2, i - 1, i].map((k) => byIndex.get(k));
    if (run.some((q) => q === undefined)) continue;
    const four = run as Period[];
    const row: FinancialRow = { ...last.row, "Fiscal Period": "TTM" };
    if (s !== "balance") for (const k of ITEMS[s]) row[k] = sum(four.map((q) => q.row[k] as number | null), TOTALS.has(k));
    out.push({
      ...last,
      // Restated when any of its quarters was.
      restatedDate: four.reduce<string | null>((m, q) => (q.restatedDate !== null && (m === null || q.restatedDate > m) ? q.restatedDate : m), null),
      row,
    });
  }
  return out;
}

function sum(xs: (number | null)[], total: boolean): number | null {
  if (total ? xs.some((x) => x === null) : xs.every((x) => x === null)) return null;
  return xs.reduce<number>((a, x) => a + (x ?? 0), 0);
}
