// Financial statements as four wide typed tables, one column per interface key:
//   financial_income / financial_balance / financial_cashflow / financial_derived
//     (ticker, type 'annual'|'quarterly'|'ttm', ord, "Fiscal Year" integer, "Fiscal Period",
//      "Report Date" date, <items> double …)
// Derived ratios are published as fixed-decimal text; they are stored as DOUBLE and formatted
// back with the same `ratio` function, which round-trips every 4-decimal text exactly.
import { DERIVED_KEYS, DERIVED_RATIOS, ITEMS, PERIOD_KEYS, ratio, type Statement } from "../../financials/items.ts";
import { Binds, type Conn, columns, ident } from "../duck/duck.ts";
import { appendTable, type Cell, type ColKind } from "../duck/write.ts";
import type { CompanyFinancials, FinancialRow, FinancialSet, FinancialType } from "./model.ts";

export type FinancialStatement = keyof FinancialSet;
export const FINANCIAL_STATEMENTS: FinancialStatement[] = ["income", "balance", "cashflow", "derived"];
const TYPES: FinancialType[] = ["annual", "quarterly", "ttm"];
export const financialTable = (s: FinancialStatement) => `financial_${s}`;

const RATIOS = new Set<string>(DERIVED_RATIOS);
const TEXT = new Set(["Fiscal Period"]);
const DATES = new Set(["Report Date", "Publish Date", "Restated Date"]);

type Kind = "int" | "text" | "date" | "ratio" | "num";
const kindOf = (k: string): Kind =>
  k === "Fiscal Year" ? "int" : TEXT.has(k) ? "text" : DATES.has(k) ? "date" : RATIOS.has(k) ? "ratio" : "num";

/** Keys of a statement's rows in the interface's order. */
export const financialKeys = (s: FinancialStatement): readonly string[] =>
  s === "derived" ? DERIVED_KEYS : [...PERIOD_KEYS, ...ITEMS[s as Statement]];

const COL_KIND: Record<Kind, ColKind> = {
  int: "integer",
  text: "varchar",
  date: "date",
  ratio: "double",
  num: "double",
};

export function financialColumns(s: FinancialStatement): [string, ColKind][] {
  return [
    ["ticker", "varchar"],
    ["type", "varchar"],
    ["ord", "integer"],
    ...financialKeys(s).map((k): [string, ColKind] => [k, COL_KIND[kindOf(k)]]),
  ];
}
export const financialDateColumns = (s: FinancialStatement) => financialKeys(s).filter((k) => kindOf(k) === "date");

/** Stages the four tables (as `<table><suffix>` in `conn`) from per-ticker financials. */
export async function stageFinancialTables(
  conn: Conn,
  byTicker: Iterable<[string, CompanyFinancials]>,
  suffix = "",
): Promise<void> {
  const list = [...byTicker];
  for (const s of FINANCIAL_STATEMENTS) {
    const keys = financialKeys(s);
    const kinds = keys.map(kindOf);
    // One array for every row: appendTable has read a row's cells before it asks for the next, and
    // a new array per row was a quarter of a financials job's allocations (young-generation GC).
    const out: Cell[] = new Array<Cell>(3 + keys.length).fill(null);
    function* cells(): Generator<Cell[]> {
      for (const [ticker, fin] of list) {
        for (const type of TYPES) {
          const rowsOf = fin[type][s];
          for (let i = 0; i < rowsOf.length; i++) {
            const r = rowsOf[i];
            out[0] = ticker;
            out[1] = type;
            out[2] = i;
            for (let k = 0; k < keys.length; k++) {
              const v = r[keys[k]];
              out[3 + k] = v === null || v === undefined ? null : kinds[k] === "ratio" ? Number(v) : v;
            }
            yield out;
          }
        }
      }
    }
    await appendTable(conn, `${financialTable(s)}${suffix}`, financialColumns(s), cells());
  }
}

/**
 * Reads the four tables (`source(statement, b)`: a SQL relation, its values bound in `b`;
 * `ticker`: that ticker's rows only; `statements`: some of them) into per-ticker financials.
 */
export async function readFinancialTables(
  conn: Conn,
  source: (s: FinancialStatement, b: Binds) => string,
  ticker?: string,
  statements: readonly FinancialStatement[] = FINANCIAL_STATEMENTS,
): Promise<Map<string, CompanyFinancials>> {
  const out = new Map<string, CompanyFinancials>();
  const get = (t: string) => {
    let f = out.get(t);
    if (!f) {
      f = { annual: emptySet(), quarterly: emptySet(), ttm: emptySet() };
      out.set(t, f);
    }
    return f;
  };
  for (const s of statements) {
    const keys = financialKeys(s);
    const kinds = keys.map(kindOf);
    const sel = keys.map((k, i) => (kinds[i] === "date" ? `strftime(${ident(k)}, '%Y-%m-%d')` : ident(k))).join(", ");
    const b = new Binds();
    const where = ticker === undefined ? "" : `where ticker = ${b.v(ticker)}`;
    const cols = await columns(
      conn,
      `select ticker, type, ${sel} from ${source(s, b)} ${where} order by ticker, type, ord`,
      b.params,
    );
    const [tickers = [], types = []] = cols as string[][];
    const template: FinancialRow = Object.fromEntries(keys.map((k) => [k, null]));
    for (let i = 0; i < tickers.length; i++) {
      const row: FinancialRow = { ...template };
      for (let k = 0; k < keys.length; k++) {
        const v = cols[k + 2][i] as string | number | null;
        row[keys[k]] =
          v === null ? null : kinds[k] === "ratio" ? ratio(v as number) : kinds[k] === "int" ? Number(v) : v;
      }
      get(tickers[i])[types[i] as FinancialType][s].push(row);
    }
  }
  return out;
}

const emptySet = (): FinancialSet => ({ income: [], balance: [], cashflow: [], derived: [] });

/**
 * `financial_rows`: the four statements of a partition in one table for the API's reads, one row
 * per statement row with its items as one DOUBLE[] (the statement's item columns in interface
 * order). A derived copy of the wide tables, written beside them by the same partition: DuckDB's
 * Parquet scan costs ~0.3 ms per column per query, so one ticker's ~130 wide columns over four
 * queries cost ~60 ms of the server's CPU cold, these ten columns in one query about half.
 */
export const FINANCIAL_ROWS = "financial_rows";
/** Every folder of a snapshot's financial tables: the four wide ones and their one-query copy. */
export const FINANCIAL_DIRS: readonly string[] = [...FINANCIAL_STATEMENTS.map(financialTable), FINANCIAL_ROWS];

/**
 * The period columns every statement row has in `financial_rows` (`Publish Date`, `Restated Date`: derived rows only).
 */
const ROW_PERIOD = ["Fiscal Year", "Fiscal Period", "Report Date", "Publish Date", "Restated Date"] as const;
/** A statement's item keys: what goes into the row's `items` list, in order. */
const itemKeys = (s: FinancialStatement) =>
  financialKeys(s).filter((k) => kindOf(k) === "ratio" || kindOf(k) === "num");

const periodType = (k: (typeof ROW_PERIOD)[number]) =>
  k === "Fiscal Year" ? "integer" : k === "Fiscal Period" ? "varchar" : "date";

/** SQL over the four wide tables (`source(statement)`: a relation) giving `financial_rows`, ordered by its key. */
export function financialRowsSql(source: (s: FinancialStatement) => string, b: Binds): string {
  const parts = FINANCIAL_STATEMENTS.map((s) => {
    const keys = new Set(financialKeys(s));
    const period = ROW_PERIOD.map((k) => `${keys.has(k) ? ident(k) : "null"}::${periodType(k)} as ${ident(k)}`);
    const items = itemKeys(s).map(ident).join(", ");
    return (
      `select ticker, ${FINANCIAL_STATEMENTS.indexOf(s)}::utinyint as statement_ord, ` +
      `${b.v(s)}::varchar as statement, type, ord, ${period.join(", ")}, [${items}]::double[] as items ` +
      `from ${source(s)}`
    );
  });
  return (
    `select * exclude (statement_ord) from (${parts.join(" union all ")}) ` +
    "order by ticker, statement_ord, type, ord"
  );
}

/** Per statement: its keys, its item keys (which are ratios) and an empty row in key order. */
const ROW_LAYOUT = new Map(
  FINANCIAL_STATEMENTS.map((s) => {
    const keys = financialKeys(s);
    const items = itemKeys(s);
    return [
      s,
      {
        keys,
        items,
        ratio: items.map((k) => kindOf(k) === "ratio"),
        template: Object.fromEntries(keys.map((k) => [k, null])) as FinancialRow,
      },
    ] as const;
  }),
);

/**
 * One ticker's statements from `financial_rows` (`relation(b)`: its part, its values bound in `b`),
 * as readFinancialTables gives them; undefined when it has none.
 */
export async function readFinancialRows(
  conn: Conn,
  relation: (b: Binds) => string,
  ticker: string,
): Promise<CompanyFinancials | undefined> {
  const dates = ROW_PERIOD.slice(2).map((k) => `strftime(${ident(k)}, '%Y-%m-%d')`);
  const b = new Binds();
  const cols = await columns(
    conn,
    `select statement, type, "Fiscal Year", "Fiscal Period", ${dates.join(", ")}, items from ${relation(b)} where ` +
      `ticker = ${b.v(ticker)} order by statement, type, ord`,
    b.params,
  );
  const [statements = [], types = []] = cols as string[][];
  if (statements.length === 0) return undefined;
  const out: CompanyFinancials = { annual: emptySet(), quarterly: emptySet(), ttm: emptySet() };
  const itemsCol = cols[cols.length - 1] as (number | null)[][];
  for (let i = 0; i < statements.length; i++) {
    const s = statements[i] as FinancialStatement;
    const { keys, items, ratio: isRatio, template } = ROW_LAYOUT.get(s)!;
    const row: FinancialRow = { ...template };
    for (let p = 0; p < ROW_PERIOD.length; p++) {
      const k = ROW_PERIOD[p];
      if (!keys.includes(k)) continue;
      const v = cols[p + 2][i] as string | number | null;
      row[k] = v === null ? null : k === "Fiscal Year" ? Number(v) : v;
    }
    const vals = itemsCol[i];
    for (let k = 0; k < items.length; k++) {
      const v = vals[k];
      row[items[k]] = v === null || v === undefined ? null : isRatio[k] ? ratio(v) : v;
    }
    out[types[i] as FinancialType][s].push(row);
  }
  return out;
}
