// The `fundamentals/` source folder: SimFin bulk files (`;`-separated), each optional, read into
// per-company financials. Bad rows are reported, not thrown, like every source reader.
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { type CompanySource, companyFinancials, type FileKind } from "../financials/build.ts";
import { DERIVED_SOURCE_COLUMNS } from "../financials/derived.ts";
import { latestRestatements, type PeriodKind, parseSimfin, type SourceRecord } from "../financials/simfin-csv.ts";
import { sourceColumns } from "../financials/statements.ts";
import type { CompanyFinancials } from "../store/snapshot/model.ts";
import type { RejectedRow } from "./report.ts";

const FILE_KINDS: FileKind[] = ["income", "balance", "cashflow", "derived"];
const PERIOD_KINDS: PeriodKind[] = ["annual", "quarterly"];

export const fundamentalsFileName = (kind: FileKind, period: PeriodKind) => `us-${kind}-${period}.csv`;

const columnsOf = (kind: FileKind) => (kind === "derived" ? DERIVED_SOURCE_COLUMNS : sourceColumns(kind));

/**
 * Validated, restatement-resolved records of one file's text. `rowMap` (a partition's slice of a
 * file, see fundamentals-split.ts) maps the slice's data rows back to the file's row numbers.
 */
export function readFundamentalsFile(
  text: string,
  kind: FileKind,
  period: PeriodKind,
  rowMap?: Int32Array,
): { records: SourceRecord[]; rejects: RejectedRow[] } {
  const file = fundamentalsFileName(kind, period);
  const parsed = parseSimfin(text, file, columnsOf(kind), period);
  if (rowMap) {
    const at = (row: number) => (row > 0 && row <= rowMap.length ? rowMap[row - 1] : row);
    for (const r of parsed.records) r.row = at(r.row);
    for (const r of parsed.rejects) r.row = at(r.row);
  }
  const resolved = latestRestatements(parsed.records, file, period);
  return { records: resolved.records, rejects: [...parsed.rejects, ...resolved.rejects] };
}

/**
 * Reads `dir` (the source's `fundamentals/` folder). A missing folder or file is no data; keys of
 * `byTicker` are upper-case tickers.
 */
export async function readFundamentals(
  dir: string,
  opts: { rowMaps?: boolean } = {},
): Promise<{ byTicker: Map<string, CompanyFinancials>; rejects: RejectedRow[] }> {
  const sources = new Map<string, CompanySource>();
  const rejects: RejectedRow[] = [];
  if (!existsSync(dir)) return { byTicker: new Map(), rejects };
  const jobs = FILE_KINDS.flatMap((kind) =>
    PERIOD_KINDS.map((period) => ({ kind, period, path: join(dir, fundamentalsFileName(kind, period)) })),
  );
  const texts = await Promise.all(
    jobs.map((j) => (existsSync(j.path) ? readFile(j.path, "utf8") : Promise.resolve(null))),
  );
  const maps = await Promise.all(
    jobs.map((j) =>
      opts.rowMaps && existsSync(`${j.path}.rows`) ? readFile(`${j.path}.rows`) : Promise.resolve(null),
    ),
  );
  jobs.forEach(({ kind, period }, n) => {
    const text = texts[n];
    if (text === null) return;
    const m = maps[n];
    const got = readFundamentalsFile(text, kind, period, m ? new Int32Array(Uint8Array.from(m).buffer) : undefined);
    rejects.push(...got.rejects);
    for (const r of got.records) {
      const src = sources.get(r.ticker) ?? {};
      sources.set(r.ticker, src);
      src[kind] ??= {};
      const byPeriod = src[kind];
      byPeriod[period] ??= [];
      byPeriod[period].push(r);
    }
  });
  const byTicker = new Map<string, CompanyFinancials>();
  for (const [ticker, src] of [...sources].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    byTicker.set(ticker, companyFinancials(src));
  return { byTicker, rejects };
}
