// Reads a whole source directory into typed DuckDB tables, or reports why it cannot.
import { existsSync, statSync } from "node:fs";
import { type Conn, rows } from "../store/duck.ts";
import { loadTable } from "./load-table.ts";
import { locateTable } from "./locate.ts";
import { type PortfolioSource, readPortfoliosJson } from "./portfolios-json.ts";
import type { RejectedRow } from "./report.ts";
import { BENCHMARKS, COMPANIES, PRICES, RATINGS, type TableSpec } from "./specs.ts";

export { formatReject, type RejectedRow, SourceRejectedError } from "./report.ts";

export interface StagedSource {
  /** Tables present in `conn`: companies, prices and, when given, ratings and benchmarks. */
  tables: Set<string>;
  portfolios: PortfolioSource;
  rejects: RejectedRow[];
  rejectCount: number;
  rowCounts: Record<string, number>;
  /** Whether the source has a portfolios.json (a backfill source may leave it out). */
  portfoliosGiven: boolean;
  /** Tables whose rows are staged in strictly ascending key order (their export needs no sort). */
  keyOrdered?: Set<string>;
}

/**
 * Only the companies table (the flow's fundamentals job needs its tickers, not the rest); false
 * when it is missing or has rejects — ingest reports those and fails the run.
 */
export async function stageCompanies(conn: Conn, dir: string): Promise<boolean> {
  let loc: ReturnType<typeof locateTable>;
  try {
    loc = existsSync(dir) ? locateTable(dir, COMPANIES.table) : null;
  } catch {
    return false;
  }
  if (!loc) return false;
  return (await loadTable(conn, COMPANIES, loc)).rejectCount === 0;
}

/**
 * Loads companies, prices, ratings, benchmarks and portfolios.json from `dir` into `conn`.
 * `partial` (backfill): tables and series the source leaves out come from the published snapshot,
 * so references to them are checked after the merge, not here.
 */
export async function stageSource(
  conn: Conn,
  dir: string,
  opts: {
    partial?: boolean;
    progress?: (
      step: string,
      done: number,
      total: number,
    ) => void /** After each table that loaded clean, before the next. */;
    loaded?: (table: string) => Promise<void>;
  } = {},
): Promise<StagedSource> {
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    return {
      tables: new Set(),
      portfolios: { portfolios: [], benchmarks: [] },
      rejects: [{ file: dir, row: 0, column: "", reason: "source directory does not exist" }],
      rejectCount: 1,
      rowCounts: {},
      portfoliosGiven: false,
    };
  }
  const tables = new Set<string>();
  const rejects: RejectedRow[] = [];
  let rejectCount = 0;
  const rowCounts: Record<string, number> = {};
  const tickerTables = new Set<string>();
  const keyOrdered = new Set<string>();
  const specs = [COMPANIES, PRICES, RATINGS, BENCHMARKS] as TableSpec[];
  for (const [i, spec] of specs.entries()) {
    opts.progress?.(spec.table, i, specs.length + 1);
    let loc: ReturnType<typeof locateTable>;
    try {
      loc = locateTable(dir, spec.table);
    } catch (e) {
      rejects.push({ file: spec.table, row: 0, column: "", reason: (e as Error).message });
      rejectCount++;
      continue;
    }
    if (!loc) {
      if (spec.required) {
        rejects.push({
          file: `${spec.table}.csv`,
          row: 0,
          column: "",
          reason: "required table is missing (CSV or Parquet file, or a folder of them)",
        });
        rejectCount++;
      }
      continue;
    }
    const r = await loadTable(conn, spec, loc);
    rejects.push(...r.rejects);
    rejectCount += r.rejectCount;
    rowCounts[spec.table] = r.rowCount;
    if (r.tickers) tickerTables.add(spec.table);
    if (r.keyOrdered) keyOrdered.add(spec.table);
    if (r.rejectCount === 0) {
      tables.add(spec.table);
      await opts.loaded?.(spec.table);
    }
  }
  opts.progress?.("checks", specs.length, specs.length + 1);
  const pj = readPortfoliosJson(dir);
  rejects.push(...pj.rejects);
  rejectCount += pj.rejects.length;

  // Checked on every table whose ticker column was read, rows with other problems included, so a
  // source is reported in one round (row errors and unknown tickers together).
  if (tickerTables.has("companies")) {
    for (const t of ["prices", "ratings"]) {
      if (!tickerTables.has(t)) continue;
      // A price or rating of a ticker no company row describes cannot be served or ranked.
      const orphans = await rows<{ ticker: string; n: bigint }>(
        conn,
        `select ticker, n from ${t}_tickers anti join companies_tickers using (ticker) order by ticker limit 50`,
      );
      for (const o of orphans)
        rejects.push({
          file: `${t}`,
          row: 0,
          column: "ticker",
          reason: `ticker ${o.ticker} (${o.n} rows) is not in companies`,
        });
      rejectCount += orphans.length;
    }
  }
  if (!opts.partial && (tables.has("benchmarks") || pj.value.benchmarks.some((b) => b.series))) {
    const names = tables.has("benchmarks")
      ? new Set((await rows<{ b: string }>(conn, `select distinct benchmark b from benchmarks`)).map((r) => r.b))
      : new Set<string>();
    pj.value.benchmarks.forEach((b, i) => {
      if (b.series !== undefined && !names.has(b.series)) {
        rejects.push({
          file: "portfolios.json",
          row: i + 1,
          column: "benchmarks.series",
          reason: `series ${JSON.stringify(b.series)} is not in the benchmarks table`,
        });
        rejectCount++;
      }
    });
  }
  return { tables, portfolios: pj.value, rejects, rejectCount, rowCounts, portfoliosGiven: pj.given, keyOrdered };
}
