// The factor model's statements: the source's annual SimFin files (income, balance, cash flow), only
// the items the factors read, one merged record per company and fiscal year, each with the date it
// became public (the latest Publish Date of its parts: a fiscal year is known once all of what the
// model reads of it is). The files are streamed in pieces, so memory is the kept items, not the text
// (the financials stage validates the same files and rejects the run on a bad row; here a bad row
// is only left out). Statements without a Publish Date are never used: nothing says when they were known.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { parseSimfin } from "../financials/simfin-csv.ts";
import { fundamentalsFileName } from "../sources/fundamentals.ts";
import { eachLine } from "../sources/lines.ts";

/** The items a statement keeps, by index into `Statement.v` (NaN: not reported). */
export const ITEM = {
  revenue: 0,
  costOfRevenue: 1,
  grossProfit: 2,
  operatingIncome: 3,
  pretaxIncome: 4,
  incomeTax: 5,
  netIncome: 6,
  shares: 7,
  cash: 8,
  currentAssets: 9,
  totalAssets: 10,
  shortTermDebt: 11,
  currentLiabilities: 12,
  longTermDebt: 13,
  equity: 14,
  operatingCashFlow: 15,
  capex: 16,
  depreciation: 17,
} as const;
export const ITEM_COUNT = 18;

/** One company's fiscal year as the model reads it. */
export interface Statement {
  fiscalYear: number;
  /** ISO date from which it counts (point in time). */
  publishDate: string;
  v: Float64Array;
}

/** Per upper-case ticker, ascending by publish date (then fiscal year). */
export type StatementsByTicker = Map<string, Statement[]>;

type FileKind = "income" | "balance" | "cashflow";
// [SimFin column, item]; a later column fills an item an earlier one left empty (Net Income (Common)
// first, then Net Income; the balance sheet's shares first, then the income statement's).
const COLUMNS: Record<FileKind, [string, number][]> = {
  income: [
    ["Revenue", ITEM.revenue],
    ["Cost of Revenue", ITEM.costOfRevenue],
    ["Gross Profit", ITEM.grossProfit],
    ["Operating Income (Loss)", ITEM.operatingIncome],
    ["Pretax Income (Loss)", ITEM.pretaxIncome],
    ["Income Tax (Expense) Benefit, Net", ITEM.incomeTax],
    ["Net Income (Common)", ITEM.netIncome],
    ["Net Income", ITEM.netIncome],
    ["Shares (Basic)", ITEM.shares],
  ],
  balance: [
    ["Shares (Basic)", ITEM.shares],
    ["Cash, Cash Equivalents & Short Term Investments", ITEM.cash],
    ["Total Current Assets", ITEM.currentAssets],
    ["Total Assets", ITEM.totalAssets],
    ["Short Term Debt", ITEM.shortTermDebt],
    ["Total Current Liabilities", ITEM.currentLiabilities],
    ["Long Term Debt", ITEM.longTermDebt],
    ["Total Equity", ITEM.equity],
  ],
  cashflow: [
    ["Net Cash from Operating Activities", ITEM.operatingCashFlow],
    ["Change in Fixed Assets & Intangibles", ITEM.capex],
    ["Depreciation & Amortization", ITEM.depreciation],
  ],
};
// Balance first: its shares win over the income statement's.
const FILES: FileKind[] = ["balance", "income", "cashflow"];
const PIECE_CHARS = 1 << 22;

/** A part of a fiscal year read from one file, before the merge. */
interface Part {
  restated: string;
  publish: string;
  values: (number | null)[];
}

/**
 * The statements of `dir` (a source's `fundamentals/` folder) for the tickers in `known` (upper
 * case). A missing folder or file is no statements.
 */
export async function readModelStatements(dir: string, known: ReadonlySet<string>): Promise<StatementsByTicker> {
  const merged = new Map<string, { fiscalYear: number; publish: string; v: Float64Array }>();
  if (!existsSync(dir)) return new Map();
  for (const kind of FILES) {
    const path = join(dir, fundamentalsFileName(kind, "annual"));
    if (!existsSync(path)) continue;
    const parts = await readParts(path, kind, known);
    for (const [key, p] of parts) {
      if (!p.publish) continue;
      let m = merged.get(key);
      if (!m) {
        m = { fiscalYear: Number(key.slice(key.lastIndexOf("|") + 1)), publish: p.publish, v: emptyItems() };
        merged.set(key, m);
      }
      if (p.publish > m.publish) m.publish = p.publish;
      COLUMNS[kind].forEach(([, item], j) => {
        const x = p.values[j];
        if (x !== null && Number.isNaN(m.v[item])) m.v[item] = x;
      });
    }
  }
  const out: StatementsByTicker = new Map();
  for (const [key, m] of merged) {
    const ticker = key.slice(0, key.lastIndexOf("|"));
    const list = out.get(ticker) ?? [];
    list.push({ fiscalYear: m.fiscalYear, publishDate: m.publish, v: m.v });
    out.set(ticker, list);
  }
  for (const list of out.values()) list.sort(byPublication);
  return out;
}

export const byPublication = (a: Statement, b: Statement) =>
  a.publishDate < b.publishDate ? -1 : a.publishDate > b.publishDate ? 1 : a.fiscalYear - b.fiscalYear;

export const emptyItems = () => new Float64Array(ITEM_COUNT).fill(NaN);

/**
 * One file's fiscal years, keyed `TICKER|year`, the latest restatement of each (as the financials
 * stage resolves them: the latest Restated Date wins, an empty one counts as earliest).
 */
async function readParts(path: string, kind: FileKind, known: ReadonlySet<string>): Promise<Map<string, Part>> {
  const names = COLUMNS[kind].map(([c]) => c);
  const file = fundamentalsFileName(kind, "annual");
  const parts = new Map<string, Part>();
  let header: string | null = null;
  let piece: string[] = [];
  let size = 0;
  const flush = () => {
    if (!piece.length || header === null) return;
    const { records } = parseSimfin(`${header}\n${piece.join("\n")}`, file, names, "annual");
    for (const r of records) {
      if (!known.has(r.ticker)) continue;
      const key = `${r.ticker}|${r.fiscalYear}`;
      const restated = r.restatedDate ?? "";
      const had = parts.get(key);
      if (had && had.restated >= restated) continue;
      parts.set(key, { restated, publish: r.publishDate ?? "", values: r.values });
    }
    piece = [];
    size = 0;
  };
  let tickerAt = -1;
  await eachLine(path, (line) => {
    if (header === null) {
      header = line;
      tickerAt = headerCells(line).indexOf("Ticker");
      return;
    }
    // SimFin's bulk files cover every US company: rows of others are left before they are parsed
    if (tickerAt >= 0 && !line.includes('"') && !known.has(cellAt(line, tickerAt).trim().toUpperCase())) return;
    piece.push(line);
    size += line.length;
    if (size > PIECE_CHARS) flush();
  });
  flush();
  return parts;
}

/** The header's cells, unquoted. */
const headerCells = (line: string) => line.split(";").map((c) => c.trim().replace(/^"(.*)"$/, "$1"));

/** The `at`-th `;`-separated cell of an unquoted line. */
function cellAt(line: string, at: number): string {
  let start = 0;
  for (let k = 0; k < at; k++) {
    start = line.indexOf(";", start) + 1;
    if (start === 0) return "";
  }
  const end = line.indexOf(";", start);
  return line.slice(start, end < 0 ? line.length : end);
}

/**
 * The statement that counts on `date` (the latest published on or before it, published within
 * `since`..date), and the fiscal years `back` years before it that were published by then.
 */
export function statementsAt(
  list: readonly Statement[] | undefined,
  date: string,
  since: string,
): { current: Statement; prior?: Statement; prior3?: Statement } | null {
  if (!list) return null;
  let at = -1;
  for (let k = 0; k < list.length && list[k].publishDate <= date; k++) at = k;
  if (at < 0 || list[at].publishDate < since) return null;
  const current = list[at];
  const year = (fy: number) => {
    for (let k = at; k >= 0; k--) if (list[k].fiscalYear === fy) return list[k];
    return undefined;
  };
  return { current, prior: year(current.fiscalYear - 1), prior3: year(current.fiscalYear - 3) };
}
