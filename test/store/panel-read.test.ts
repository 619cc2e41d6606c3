// The price panel read from a DuckDB table (stages/frames.ts loadPanel): both ways of numbering the
// tickers (per-ticker runs of a key-ordered table, an ENUM otherwise) give the panel written out
// by hand below, whatever order the rows are stored in.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadPanel } from "../../pipeline/stages/frames.ts";
import { openDuck } from "../../pipeline/store/duck/duck.ts";

// (ticker, date, close, adj_close): BBB has no price on 2024-01-03; CCC's adj_close is missing
// on 2024-01-02 (its close is used); the dates cross a month and a year.
const ROWS: [string, string, number, number | null][] = [
  ["AAA", "2023-12-29", 10, 9.5],
  ["AAA", "2024-01-02", 11, 10.5],
  ["AAA", "2024-01-03", 12, 11.5],
  ["BBB", "2023-12-29", 20, 20],
  ["BBB", "2024-01-02", 21, 21],
  ["CCC", "2024-01-02", 30, null],
  ["CCC", "2024-01-03", 31, 30.5],
];
const EXPECTED = {
  dates: ["2023-12-29", "2024-01-02", "2024-01-03"],
  tickers: ["AAA", "BBB", "CCC"],
  close: [
    [9.5, 10.5, 11.5],
    [20, 21, NaN],
    [NaN, 30, 30.5],
  ],
};

let db: Awaited<ReturnType<typeof openDuck>>;
beforeEach(async () => {
  db = await openDuck(":memory:", { threads: "1" });
});
afterEach(() => db.close());

async function table(name: string, rows: typeof ROWS) {
  await db.conn.run(`create table ${name} (ticker varchar, date date, "close" double, adj_close double)`);
  const values = rows.map(([t, d, c, a]) => `('${t}', DATE '${d}', ${c}, ${a ?? "null"})`).join(", ");
  if (rows.length) await db.conn.run(`insert into ${name} values ${values}`);
}
const plain = (p: Awaited<ReturnType<typeof loadPanel>>) => ({
  dates: p.dates,
  tickers: p.tickers,
  close: p.close.map((c) => [...c]),
});

describe("loadPanel", () => {
  it("reads a key-ordered table by its per-ticker runs", async () => {
    await table("prices", ROWS);
    expect(plain(await loadPanel(db.conn, "prices", { keyOrdered: true }))).toEqual(EXPECTED);
  });

  it("reads rows in any order through the ENUM of tickers, and drops the type after", async () => {
    const shuffled = [ROWS[5], ROWS[1], ROWS[3], ROWS[6], ROWS[0], ROWS[4], ROWS[2]];
    await table("new_prices", shuffled);
    expect(plain(await loadPanel(db.conn, "new_prices"))).toEqual(EXPECTED);
    expect(plain(await loadPanel(db.conn, "new_prices"))).toEqual(EXPECTED);
    const [types] = (await (
      await db.conn.runAndReadAll("select count(*)::integer from duckdb_types() where type_name like 'panel_tickers_%'")
    ).getColumnsJS()) as number[][];
    expect(types[0]).toBe(0);
  });

  it("an empty table is an empty panel", async () => {
    await table("prices", []);
    for (const keyOrdered of [true, false])
      expect(plain(await loadPanel(db.conn, "prices", { keyOrdered }))).toEqual({ dates: [], tickers: [], close: [] });
  });
});
