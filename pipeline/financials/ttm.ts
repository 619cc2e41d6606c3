// Trailing-twelve-month periods from quarterly ones: one per quarter that closes a run of four
// consecutive quarters (Q4 of a year is followed by Q1 of the next).

import { ITEMS, type Statement, TOTALS } from "./items.ts";
import type { FinancialRow } from "./rows.ts";
import type { Period } from "./statements.ts";

const quarterIndex = (p: Period) => p.fiscalYear * 4 + Number(p.fiscalPeriod.slice(1)) - 1;

/**
 * Flows (income, cash flow) are the sum of the four quarters; the balance sheet is the last
 * quarter's. In a sum a total needs all four quarters, while a line is null only when all four are
 * empty (an empty quarter counts 0: nothing reported on that line then).
 */
export function ttmPeriods(s: Statement, quarters: Period[]): Period[] {
  const byIndex = new Map(quarters.map((q) => [quarterIndex(q), q]));
  const items = s === "balance" ? [] : ITEMS[s];
  const out: Period[] = [];
  for (const last of quarters) {
    const i = quarterIndex(last);
    const q0 = byIndex.get(i - 3);
    const q1 = byIndex.get(i - 2);
    const q2 = byIndex.get(i - 1);
    const q3 = byIndex.get(i);
    if (!q0 || !q1 || !q2 || !q3) continue;
    const row: FinancialRow = { ...last.row, "Fiscal Period": "TTM" };
    // four arguments, not an array per line: this runs for every line of every quarter
    for (const k of items)
      row[k] = sum(
        q0.row[k] as number | null,
        q1.row[k] as number | null,
        q2.row[k] as number | null,
        q3.row[k] as number | null,
        TOTALS.has(k),
      );
    out.push({
      ...last,
      // Restated when any of its quarters was.
      restatedDate: [q0, q1, q2, q3].reduce<string | null>(
        (m, q) => (q.restatedDate !== null && (m === null || q.restatedDate > m) ? q.restatedDate : m),
        null,
      ),
      row,
    });
  }
  return out;
}

function sum(a: number | null, b: number | null, c: number | null, d: number | null, total: boolean): number | null {
  const nulls = +(a === null) + +(b === null) + +(c === null) + +(d === null);
  if (total ? nulls > 0 : nulls === 4) return null;
  // from 0, in the order the quarters ran (the same sum, to the last bit, as a reduce over them)
  return 0 + (a ?? 0) + (b ?? 0) + (c ?? 0) + (d ?? 0);
}
