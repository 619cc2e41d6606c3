// Every rejection kind of contract §2, each with the file, row and column it must name.

import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { stageSource } from "../../pipeline/sources/index.ts";
import { type Conn, columns, openDuck } from "../../pipeline/store/duck/duck.ts";
import { tinyFiles, writeTinySource } from "../fixtures/tiny-source.ts";

let db: Awaited<ReturnType<typeof openDuck>>;
let conn: Conn;
beforeEach(async () => {
  db = await openDuck();
  conn = db.conn;
});
afterEach(() => db.close());

const replaceLine = (text: string, lineNo: number, line: string) =>
  text
    .split("\n")
    .map((l, i) => (i === lineNo ? line : l))
    .join("\n");

describe("stageSource", () => {
  it("loads a clean source, the all_stocks_5yr layout (Name, empty open/high/low) included", async () => {
    const s = await stageSource(conn, writeTinySource());
    expect(s.rejects).toEqual([]);
    expect(s.rowCounts).toEqual({ companies: 4, prices: 120, ratings: 8, benchmarks: 30 });
    const [opens, tickers] = await columns(conn, "select count(open), count(distinct ticker) from prices");
    expect(Number(opens[0])).toBe(0); // empty optional cells are null, not errors
    expect(Number(tickers[0])).toBe(4);
    const [shares] = await columns(conn, "select shares_outstanding from companies where ticker = 'CCC'");
    expect(shares[0]).toBeNull();
    expect(s.portfolios.portfolios[0].ranges).toEqual({ return_rating: [0, 10] });
  });

  it("names a missing required column", async () => {
    const s = await stageSource(
      conn,
      writeTinySource((f) => ({ "prices.csv": f["prices.csv"].replace("close,", "closing,") })),
    );
    expect(s.rejects).toContainEqual({
      file: "prices.csv",
      row: 0,
      column: "close",
      reason: "required column is missing",
    });
  });

  it("names unparseable values, bad dates and non-positive prices by row", async () => {
    const f = tinyFiles();
    const lines = f["prices.csv"].split("\n");
    const bad = replaceLine(
      replaceLine(
        replaceLine(f["prices.csv"], 3, lines[3].replace(/,[\d.]+,1000,/, ",abc,1000,")),
        5,
        lines[5].replace(/^[\d-]+/, "2024-13-01"),
      ),
      7,
      lines[7].replace(/,[\d.]+,1000,/, ",0,1000,"),
    );
    const s = await stageSource(
      conn,
      writeTinySource(() => ({ "prices.csv": bad })),
    );
    expect(s.rejects).toEqual(
      expect.arrayContaining([
        { file: "prices.csv", row: 3, column: "close", reason: "not a number" },
        { file: "prices.csv", row: 5, column: "date", reason: "not a date (YYYY-MM-DD)" },
        { file: "prices.csv", row: 7, column: "close", reason: "must be positive" },
      ]),
    );
    expect(s.tables.has("prices")).toBe(false);
  });

  it("names duplicate keys with the row of the first occurrence", async () => {
    const f = tinyFiles();
    const s = await stageSource(
      conn,
      writeTinySource(() => ({ "prices.csv": `${f["prices.csv"]}\n${f["prices.csv"].split("\n")[2]}` })),
    );
    expect(s.rejects).toContainEqual({
      file: "prices.csv",
      row: 121,
      column: "ticker+date",
      reason: "duplicate key, first at row 2",
    });
  });

  it("rejects ratings outside 0..10, missing values and unknown tickers", async () => {
    const f = tinyFiles();
    const r = f["ratings.csv"].split("\n");
    const bad = replaceLine(
      replaceLine(f["ratings.csv"], 1, r[1].replace(/,5\.0000$/, ",10.5")),
      2,
      r[2].replace(/^([^,]+,[^,]+,)[^,]+/, "$1"),
    );
    const s = await stageSource(
      conn,
      writeTinySource(() => ({ "ratings.csv": `${bad}\n2024-01-01,ZZZ,1,1,1,1,1,1,1` })),
    );
    expect(s.rejects).toEqual(
      expect.arrayContaining([
        { file: "ratings.csv", row: 1, column: "macro_rating", reason: "must be within 0..10" },
        { file: "ratings.csv", row: 2, column: "total_rating", reason: "missing value" },
      ]),
    );
    const s2 = await stageSource(
      conn,
      writeTinySource((x) => ({ "ratings.csv": `${x["ratings.csv"]}\n2024-01-01,ZZZ,1,1,1,1,1,1,1` })),
    );
    expect(s2.rejects).toEqual([
      { file: "ratings", row: 0, column: "ticker", reason: "ticker ZZZ (1 rows) is not in companies" },
    ]);
  });

  it("reports row errors and unknown tickers in one round (issue 13), whichever table has the row errors", async () => {
    const f = tinyFiles();
    const prices = f["prices.csv"].split("\n");
    // prices: row 3 has an unparseable close, and ticker ZZZ has two rows; companies: row 2 a bad share count.
    const badPrices =
      `${replaceLine(f["prices.csv"], 3, prices[3].replace(/,[\d.]+,1000,/, ",abc,1000,"))}` +
      `\n2024-01-01,,,,5,1,ZZZ\n2024-01-02,,,,5,1,zzz`;
    const badCompanies = f["companies.csv"].replace(
      "BBB,Beta Corp,Tech,Hardware,2000",
      "BBB,Beta Corp,Tech,Hardware,-5",
    );
    const s = await stageSource(
      conn,
      writeTinySource(() => ({
        "prices.csv": badPrices,
        "companies.csv": badCompanies,
        "ratings.csv": `${f["ratings.csv"]}\n2024-01-01,YYY,1,1,1,1,1,1,1`,
      })),
    );
    expect(s.rejects).toEqual([
      { file: "companies.csv", row: 2, column: "shares_outstanding", reason: "must not be negative" },
      { file: "prices.csv", row: 3, column: "close", reason: "not a number" },
      { file: "prices", row: 0, column: "ticker", reason: "ticker ZZZ (2 rows) is not in companies" },
      { file: "ratings", row: 0, column: "ticker", reason: "ticker YYY (1 rows) is not in companies" },
    ]);
    expect(s.rejectCount).toBe(4);
  });

  it("requires companies and prices; bad portfolios.json names the field", async () => {
    const s = await stageSource(
      conn,
      writeTinySource(() => ({
        "prices.csv": null,
        "portfolios.json": JSON.stringify({
          portfolios: [{ id: "x", name: "n", rebalanceFrequency: 1, maxStocks: 0 }],
        }),
      })),
    );
    expect(s.rejects).toEqual(
      expect.arrayContaining([
        {
          file: "prices.csv",
          row: 0,
          column: "",
          reason: "required table is missing (CSV or Parquet file, or a folder of them)",
        },
        expect.objectContaining({ file: "portfolios.json", row: 1, column: "portfolios.0.id" }),
        expect.objectContaining({ file: "portfolios.json", row: 1, column: "portfolios.0.maxStocks" }),
      ]),
    );
  });

  it("reads a folder of files and Parquet input", async () => {
    const dir = writeTinySource(() => ({ "prices.csv": null }));
    const lines = tinyFiles()["prices.csv"].split("\n");
    mkdirSync(join(dir, "prices"));
    writeFileSync(join(dir, "prices", "a.csv"), [lines[0], ...lines.slice(1, 61)].join("\n"));
    writeFileSync(join(dir, "prices", "b.csv"), [lines[0], ...lines.slice(61)].join("\n"));
    const s = await stageSource(conn, dir);
    expect(s.rejects).toEqual([]);
    expect(s.rowCounts.prices).toBe(120);
    await conn.run(`copy companies to '${join(dir, "companies.parquet")}' (format parquet)`);
    const { rmSync } = await import("node:fs");
    rmSync(join(dir, "companies.csv"));
    const s2 = await stageSource(conn, dir);
    expect(s2.rejects).toEqual([]);
    expect(s2.rowCounts.companies).toBe(4);
  });
});
