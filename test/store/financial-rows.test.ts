// `financial_rows`, the API's one-query copy of the four wide statement tables
// (pipeline/store/snapshot/financial-tables.ts): written by each financials partition beside its wide parts,
// read by the lazy reader. Checked on a real published store against the wide tables themselves
// (every ticker, values and key order, so the REST bytes cannot move) and by hand for one row.
import { renameSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { ITEMS } from "../../pipeline/financials/items.ts";
import { Binds, type Conn } from "../../pipeline/store/duck/duck.ts";
import { SnapshotReader } from "../../pipeline/store/read/snapshot-reader.ts";
import {
  FINANCIAL_ROWS,
  FINANCIAL_STATEMENTS,
  financialTable,
  readFinancialRows,
  readFinancialTables,
} from "../../pipeline/store/snapshot/financial-tables.ts";
import { READER_INDEX } from "../../pipeline/store/snapshot/reader-index.ts";
import { publishedSnapshot } from "./published.ts";

let dataDir: string;
let id: string;
let dir: string;
let db: { conn: Conn; close(): void };

beforeAll(async () => {
  ({ dataDir, id, dir, db } = await publishedSnapshot({ companies: 20, years: 2, seed: 5, tickersPerPartition: 6 }));
}, 180_000);
afterAll(() => db?.close());

const wide = (s: (typeof FINANCIAL_STATEMENTS)[number], b: Binds) =>
  `read_parquet(${b.v(join(dir, financialTable(s), "*.parquet"))})`;
const rowsRel = (b: Binds) => `read_parquet(${b.v(join(dir, FINANCIAL_ROWS, "*.parquet"))})`;

it("gives every ticker the statements the four wide tables give, in the same key order", async () => {
  const fromWide = await readFinancialTables(db.conn, wide);
  expect(fromWide.size).toBeGreaterThan(10);
  const [[parts]] = (
    await db.conn.runAndReadAll("select count(distinct filename) from read_parquet($f, filename = true)", {
      f: join(dir, FINANCIAL_ROWS, "*.parquet"),
    })
  ).getRowsJS() as [[bigint]];
  expect(Number(parts)).toBe(4); // 20 companies in ranges of 6, as the wide tables
  let rows = 0;
  for (const [ticker, f] of fromWide) {
    const got = await readFinancialRows(db.conn, rowsRel, ticker);
    // JSON text: values, nulls and the order of the keys, which is the REST body's order
    expect(JSON.stringify(got)).toBe(JSON.stringify(f));
    for (const t of ["annual", "quarterly", "ttm"] as const)
      for (const s of FINANCIAL_STATEMENTS) rows += f[t][s].length;
  }
  const b = new Binds();
  const [[stored]] = (await db.conn.runAndReadAll(`select count(*) from ${rowsRel(b)}`, b.params)).getRowsJS() as [
    [bigint],
  ];
  expect(Number(stored)).toBe(rows);
  expect(await readFinancialRows(db.conn, rowsRel, "NO-SUCH-TICKER")).toBeUndefined();
});

it("stores a statement row's items in interface order (one row by hand)", async () => {
  const wb = new Binds();
  const [[ticker, year, revenue, netIncome]] = (
    await db.conn.runAndReadAll(
      `select ticker, "Fiscal Year", "Revenue", "Net Income (Common)" from ${wide("income", wb)} where type = ` +
        `'annual' order by ticker, ord limit 1`,
      wb.params,
    )
  ).getRowsJS() as [[string, number, number, number | null]];
  const rb = new Binds();
  const [[items, fy, period]] = (
    await db.conn.runAndReadAll(
      `select items, "Fiscal Year", "Fiscal Period" from ${rowsRel(rb)} where ticker = ${rb.v(ticker)} and statement ` +
        `= 'income' and type = 'annual' order by ord limit 1`,
      rb.params,
    )
  ).getRowsJS() as [[number[], number, string]];
  expect(fy).toBe(year);
  expect(period).toBe("FY");
  expect(items.length).toBe(ITEMS.income.length);
  expect(items[ITEMS.income.indexOf("Revenue")]).toBe(revenue);
  expect(items[ITEMS.income.indexOf("Net Income (Common)")]).toBe(netIncome);
});

it("the reader answers the same with the copy and, for a snapshot without it, from the wide tables", async () => {
  const withRows = await SnapshotReader.open(dataDir, id, { warm: false });
  const tickers = withRows.companies.map((c) => c.ticker.toUpperCase());
  const before = await Promise.all(tickers.map((t) => withRows.companyFinancials(t)));
  withRows.close();
  // a snapshot published before the copy existed: neither the folder nor its index entry
  const aside = [FINANCIAL_ROWS, READER_INDEX].map((f) => [join(dir, f), join(dir, `${f}.aside`)] as const);
  for (const [a, b] of aside) renameSync(a, b);
  try {
    const without = await SnapshotReader.open(dataDir, id, { warm: false });
    try {
      expect((without as unknown as { parts: Map<string, unknown> }).parts.has(FINANCIAL_ROWS)).toBe(false);
      const after = await Promise.all(tickers.map((t) => without.companyFinancials(t)));
      expect(JSON.stringify(after)).toBe(JSON.stringify(before));
      expect(before.filter(Boolean).length).toBeGreaterThan(10);
    } finally {
      without.close();
    }
  } finally {
    for (const [a, b] of aside) renameSync(b, a);
  }
});
