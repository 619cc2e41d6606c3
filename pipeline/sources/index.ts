// Reads a whole source directory into typed DuckDB tables, or reports why it cannot.
import { existsSync, statSync } from "node:fs";
import { type Conn, rows } from "../store/duck/duck.ts";
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
  /** The source folder (the ratings model reads its fundamentals). */
  dir?: string;
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

export interface StageOptions {
  partial?: boolean;
  progress?: (step: string, done: number, total: number) => void;
  /** After each table that loaded clean, before the next. */
  loaded?: (table: string) => Promise<void>;
}

const SPECS = [COMPANIES, PRICES, RATINGS, BENCHMARKS] as TableSpec[];

/** What loading the tables found: the clean tables, every reject, row counts, and how each table was read. */
interface Loaded {
  tables: Set<string>;
  rejects: RejectedRow[];
  /** All rejects, beyond the ones listed (a table lists at most MAX_REPORTED). */
  rejectCount: number;
  rowCounts: Record<string, number>;
  tickerTables: Set<string>;
  keyOrdered: Set<string>;
}

/** Locates and loads each table of SPECS, collecting rejects (a missing required table is one). */
async function loadTables(conn: Conn, dir: string, opts: StageOptions): Promise<Loaded> {
  const got: Loaded = {
    ...{ tables: new Set(), rejects: [], rejectCount: 0, rowCounts: {} },
    ...{ tickerTables: new Set(), keyOrdered: new Set() },
  };
  for (const [i, spec] of SPECS.entries()) {
    opts.progress?.(spec.table, i, SPECS.length + 1);
    let loc: ReturnType<typeof locateTable>;
    try {
      loc = locateTable(dir, spec.table);
    } catch (e) {
      got.rejects.push({ file: spec.table, row: 0, column: "", reason: (e as Error).message });
      got.rejectCount++;
      continue;
    }
    if (!loc) {
      if (spec.required) {
        got.rejects.push({
          file: `${spec.table}.csv`,
          row: 0,
          column: "",
          reason: "required table is missing (CSV or Parquet file, or a folder of them)",
        });
        got.rejectCount++;
      }
      continue;
    }
    const r = await loadTable(conn, spec, loc);
    got.rejects.push(...r.rejects);
    got.rejectCount += r.rejectCount;
    got.rowCounts[spec.table] = r.rowCount;
    if (r.tickers) got.tickerTables.add(spec.table);
    if (r.keyOrdered) got.keyOrdered.add(spec.table);
    if (r.rejectCount === 0) {
      got.tables.add(spec.table);
      await opts.loaded?.(spec.table);
    }
  }
  return got;
}

/**
 * Prices and ratings of tickers no company row describes (they cannot be served or ranked), at
 * most 50 per table. Checked on every table whose ticker column was read, rows with other problems
 * included, so a source is reported in one round (row errors and unknown tickers together).
 */
async function orphanTickers(conn: Conn, tickerTables: Set<string>): Promise<RejectedRow[]> {
  const out: RejectedRow[] = [];
  if (!tickerTables.has("companies")) return out;
  for (const t of ["prices", "ratings"]) {
    if (!tickerTables.has(t)) continue;
    const orphans = await rows<{ ticker: string; n: bigint }>(
      conn,
      `select ticker, n from ${t}_tickers anti join companies_tickers using (ticker) order by ticker limit 50`,
    );
    for (const o of orphans)
      out.push({
        file: `${t}`,
        row: 0,
        column: "ticker",
        reason: `ticker ${o.ticker} (${o.n} rows) is not in companies`,
      });
  }
  return out;
}

/** portfolios.json benchmarks naming a series the benchmarks table does not have. */
async function unknownSeries(conn: Conn, tables: Set<string>, pj: PortfolioSource): Promise<RejectedRow[]> {
  const names = tables.has("benchmarks")
    ? new Set((await rows<{ b: string }>(conn, `select distinct benchmark b from benchmarks`)).map((r) => r.b))
    : new Set<string>();
  return pj.benchmarks.flatMap((b, i) =>
    b.series !== undefined && !names.has(b.series)
      ? [
          {
            file: "portfolios.json",
            row: i + 1,
            column: "benchmarks.series",
            reason: `series ${JSON.stringify(b.series)} is not in the benchmarks table`,
          },
        ]
      : [],
  );
}

/**
 * Loads companies, prices, ratings, benchmarks and portfolios.json from `dir` into `conn`.
 * `partial` (backfill): tables and series the source leaves out come from the published snapshot,
 * so references to them are checked after the merge, not here.
 */
export async function stageSource(conn: Conn, dir: string, opts: StageOptions = {}): Promise<StagedSource> {
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
  const got = await loadTables(conn, dir, opts);
  opts.progress?.("checks", SPECS.length, SPECS.length + 1);
  const pj = readPortfoliosJson(dir);
  const found = [...pj.rejects, ...(await orphanTickers(conn, got.tickerTables))];
  if (!opts.partial && (got.tables.has("benchmarks") || pj.value.benchmarks.some((b) => b.series)))
    found.push(...(await unknownSeries(conn, got.tables, pj.value)));
  const rejects = [...got.rejects, ...found];
  const rejectCount = got.rejectCount + found.length;
  const { tables, rowCounts, keyOrdered } = got;
  return { tables, portfolios: pj.value, rejects, rejectCount, rowCounts, portfoliosGiven: pj.given, keyOrdered, dir };
}
