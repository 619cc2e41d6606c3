// One company's validated source records to its CompanyFinancials: statement rows per type, TTM
// from the quarters, and the derived array (from a given derived file, else computed).

import { derivedFromRecord, derivedRows } from "./derived.ts";
import type { Statement } from "./items.ts";
import type { CompanyFinancials, FinancialRow, FinancialSet } from "./rows.ts";
import type { PeriodKind, SourceRecord } from "./simfin-csv.ts";
import { byReportDate, type Period, statementPeriod } from "./statements.ts";
import { ttmPeriods } from "./ttm.ts";

export type FileKind = Statement | "derived";

/** A company's records by file: `[kind][annual|quarterly]`. */
export type CompanySource = Partial<Record<FileKind, Partial<Record<PeriodKind, SourceRecord[]>>>>;

const STATEMENTS: Statement[] = ["income", "balance", "cashflow"];

const emptySet = (): FinancialSet => ({ income: [], balance: [], cashflow: [], derived: [] });

export const emptyFinancials = (): CompanyFinancials => ({
  annual: emptySet(),
  quarterly: emptySet(),
  ttm: emptySet(),
});

function periods(src: CompanySource, s: Statement, kind: PeriodKind): Period[] {
  return (src[s]?.[kind] ?? []).map((r) => statementPeriod(s, r)).sort(byReportDate);
}

function given(src: CompanySource, kind: PeriodKind): FinancialRow[] | null {
  const recs = src.derived?.[kind];
  if (!recs?.length) return null;
  const sorted = [...recs].sort((a, b) =>
    a.reportDate < b.reportDate ? -1 : a.reportDate > b.reportDate ? 1 : a.fiscalYear - b.fiscalYear,
  );
  return sorted.map(derivedFromRecord);
}

export function companyFinancials(src: CompanySource): CompanyFinancials {
  const out = emptyFinancials();
  for (const kind of ["annual", "quarterly"] as const) {
    const ps = Object.fromEntries(STATEMENTS.map((s) => [s, periods(src, s, kind)])) as Record<Statement, Period[]>;
    for (const s of STATEMENTS) out[kind][s] = ps[s].map((p) => p.row);
    out[kind].derived = given(src, kind) ?? derivedRows(kind, ps.income, ps.balance, ps.cashflow);
    if (kind === "quarterly") {
      const ttm = Object.fromEntries(STATEMENTS.map((s) => [s, ttmPeriods(s, ps[s])])) as Record<Statement, Period[]>;
      for (const s of STATEMENTS) out.ttm[s] = ttm[s].map((p) => p.row);
      out.ttm.derived = derivedRows("ttm", ttm.income, ttm.balance, ttm.cashflow);
    }
  }
  return out;
}
