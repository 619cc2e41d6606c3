// Partitioned financials: one ticker range's slice of the fundamentals files (see
// sources/fundamentals-split.ts) validated, built into statements and written as the four
// `financial_<statement>/part-<k>.parquet` tables, then `financial_rows/part-<k>.parquet` (the API's
// one-query copy; written last, so its presence means the partition is whole). Memory is the
// range's companies only.
import { join } from "node:path";
import { readFundamentals } from "../sources/fundamentals.ts";
import type { RejectedRow } from "../sources/report.ts";
import { Binds, ident } from "../store/duck/duck.ts";
import { withScratch } from "../store/duck/scratch.ts";
import { exportParquetFile, exportQueryFile, KEYED_ROW_GROUP } from "../store/duck/write.ts";
import {
  FINANCIAL_ROWS,
  FINANCIAL_STATEMENTS,
  financialDateColumns,
  financialRowsSql,
  financialTable,
  stageFinancialTables,
} from "../store/snapshot/financial-tables.ts";
import { partFile } from "./partitions.ts";

export interface FinancialsJob {
  out: string;
  /** This partition's slice of the fundamentals folder. */
  sliceDir: string;
  part: number;
}

export const REJECTS_LISTED = 1000;

export async function financialsPartition(
  job: FinancialsJob,
): Promise<{ companies: number; rejects: RejectedRow[]; rejectCount: number }> {
  const { byTicker, rejects } = await readFundamentals(job.sliceDir, { rowMaps: true });
  if (rejects.length) return { companies: 0, rejects: rejects.slice(0, REJECTS_LISTED), rejectCount: rejects.length };
  return withScratch(async (conn) => {
    await stageFinancialTables(conn, byTicker);
    for (const s of FINANCIAL_STATEMENTS) {
      const t = financialTable(s);
      await exportParquetFile(
        conn,
        t,
        join(job.out, t, partFile(job.part)),
        financialDateColumns(s),
        "ticker, type, ord",
        KEYED_ROW_GROUP,
      );
    }
    const b = new Binds();
    await exportQueryFile(
      conn,
      financialRowsSql((s) => ident(financialTable(s)), b),
      join(job.out, FINANCIAL_ROWS, partFile(job.part)),
      KEYED_ROW_GROUP,
      b.params,
    );
    return { companies: byTicker.size, rejects: [] as RejectedRow[], rejectCount: 0 };
  });
}
