// Reading the fundamentals folder: every rejection kind, absent files and folders, unknown columns,
// a given derived file, and gaps in the quarters.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readFundamentals, readFundamentalsFile } from "../../pipeline/sources/fundamentals.ts";

const root = mkdtempSync(join(tmpdir(), "fin-src-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** A fundamentals folder holding `files` (name → lines). */
function folder(name: string, files: Record<string, string[]>): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  for (const [f, lines] of Object.entries(files)) writeFileSync(join(dir, f), `${lines.join("\n")}\n`);
  return dir;
}

const HEAD =
  `Ticker;"Fiscal Year";"Fiscal Period";"Report Date";"Publish Date";"Restated ` +
  `Date";Revenue;"Net Income (Common)"`;

describe("rejections", () => {
  it("names file, row and column for every bad cell and drops the row", () => {
    const text = [
      `${HEAD};Notes`,
      "AAA;2020;FY;2020-12-31;2021-02-01;2021-02-01;100;10;anything goes here", // fine: unknown column ignored
      "AAA;2021;FY;2021-12-31;2022-02-01;2022-02-01;1O0;10;", // letter O
      ";2019;FY;2019-12-31;;;100;10;",
      "BBB;20x9;FY;2019-12-31;;;100;10;",
      "BBB;2019;;2019-12-31;;;100;10;",
      "BBB;2019;Q1;2019-12-31;;;100;10;", // a quarter in an annual file
      "BBB;2020;FY;2020-02-30;;;100;10;",
      "BBB;2021;FY;;;;100;10;",
      "BBB;2022;FY;2022-12-31;2023-13-01;yesterday;abc;1e3;",
    ].join("\n");
    const { records, rejects } = readFundamentalsFile(text, "income", "annual");
    expect(records.map((r) => `${r.ticker} ${r.fiscalYear}`)).toEqual(["AAA 2020"]);
    const f = "us-income-annual.csv";
    expect(rejects).toEqual([
      { file: f, row: 2, column: "Revenue", reason: "not a number" },
      { file: f, row: 3, column: "Ticker", reason: "missing value" },
      { file: f, row: 4, column: "Fiscal Year", reason: "not a year" },
      { file: f, row: 5, column: "Fiscal Period", reason: "missing value" },
      { file: f, row: 6, column: "Fiscal Period", reason: "annual files carry FY or Q4" },
      { file: f, row: 7, column: "Report Date", reason: "not a date (YYYY-MM-DD)" },
      { file: f, row: 8, column: "Report Date", reason: "missing value" },
      { file: f, row: 9, column: "Publish Date", reason: "not a date (YYYY-MM-DD)" },
      { file: f, row: 9, column: "Restated Date", reason: "not a date (YYYY-MM-DD)" },
      { file: f, row: 9, column: "Revenue", reason: "not a number" },
    ]);
  });

  it("rejects a file missing a required column with row 0", () => {
    const { records, rejects } = readFundamentalsFile(
      `Ticker;"Fiscal Period";Revenue\nAAA;FY;1\n`,
      "income",
      "quarterly",
    );
    expect(records).toEqual([]);
    expect(rejects).toEqual([
      { file: "us-income-quarterly.csv", row: 0, column: "Fiscal Year", reason: "required column is missing" },
      { file: "us-income-quarterly.csv", row: 0, column: "Report Date", reason: "required column is missing" },
    ]);
  });

  it("rejects a quarterly row that is not Q1..Q4", () => {
    const { rejects } = readFundamentalsFile(`${HEAD}\nAAA;2020;FY;2020-12-31;;;1;1\n`, "income", "quarterly");
    expect(rejects).toEqual([
      { file: "us-income-quarterly.csv", row: 1, column: "Fiscal Period", reason: "quarterly files carry Q1..Q4" },
    ]);
  });

  it("lets the latest restatement win and rejects ties as duplicates", () => {
    const text = [
      HEAD,
      "AAA;2020;Q1;2020-03-31;2020-05-01;2020-05-01;100;10",
      "AAA;2020;Q1;2020-03-31;2020-05-01;2021-05-01;110;11", // restated: wins
      "AAA;2020;Q1;2020-03-31;2020-05-01;2020-06-01;105;10", // older restatement: dropped silently
      "AAA;2020;Q2;2020-06-30;2020-08-01;2020-08-01;100;10",
      "aaa;2020;Q2;2020-06-30;2020-08-01;2020-08-01;120;10", // same key, same date: duplicate
    ].join("\n");
    const { records, rejects } = readFundamentalsFile(text, "income", "quarterly");
    expect(records.map((r) => [r.fiscalPeriod, r.values[0]])).toEqual([
      ["Q1", 110],
      ["Q2", 100],
    ]);
    expect(rejects).toEqual([
      {
        file: "us-income-quarterly.csv",
        row: 5,
        column: "Ticker+Fiscal Year+Fiscal Period",
        reason: "duplicate key with the same Restated Date, first at row 4",
      },
    ]);
  });

  it("collects rejects from every file of the folder", async () => {
    const dir = folder("bad", {
      "us-income-annual.csv": [HEAD, "AAA;2020;FY;2020-12-31;;;x;1"],
      "us-cashflow-quarterly.csv": ["Ticker;Revenue", "AAA;1"],
    });
    const { byTicker, rejects } = await readFundamentals(dir);
    expect(byTicker.size).toBe(0);
    expect(rejects.map((r) => `${r.file}:${r.row} ${r.column}`)).toEqual([
      "us-income-annual.csv:1 Revenue",
      "us-cashflow-quarterly.csv:0 Fiscal Year",
      "us-cashflow-quarterly.csv:0 Fiscal Period",
      "us-cashflow-quarterly.csv:0 Report Date",
    ]);
  });
});

describe("the folder", () => {
  it("is empty data when absent", async () => {
    expect(await readFundamentals(join(root, "nowhere"))).toEqual({ byTicker: new Map(), rejects: [] });
  });

  it("reads quoted data rows through csv-parse, CRLF line ends too", async () => {
    const dir = folder("quoted", {
      "us-income-annual.csv": [`${HEAD}\r`, `"AAA";2020;"FY";2020-12-31;;;"1000";"-5"\r`],
    });
    const { byTicker, rejects } = await readFundamentals(dir);
    expect(rejects).toEqual([]);
    const row = byTicker.get("AAA")!.annual.income[0];
    expect([row.Revenue, row["Net Income (Common)"], row["Gross Profit"]]).toEqual([1000, -5, null]);
  });

  it("uses a given derived file instead of computing, formatted like computed rows", async () => {
    const dir = folder("derived", {
      "us-income-annual.csv": [HEAD, "AAA;2020;FY;2020-12-31;;;1000;100"],
      "us-derived-annual.csv": [
        `Ticker;"Fiscal Year";"Fiscal Period";"Report Date";"Publish Date";"Restated Date";EBITDA;"Net Profit ` +
          `Margin";"Piotroski F-Score";"Earnings Per Share, Basic"`,
        "AAA;2020;FY;2020-12-31;2021-02-01;2021-02-01;1234.6;0.123456;7;",
      ],
    });
    const fin = (await readFundamentals(dir)).byTicker.get("AAA")!;
    const [d] = fin.annual.derived;
    expect([
      d.EBITDA,
      d["Net Profit Margin"],
      d["Piotroski F-Score"],
      d["Earnings Per Share, Basic"],
      d["Publish Date"],
    ]).toEqual([1235, "0.1235", 7, null, "2021-02-01"]);
    // Computed would say 100 / 1000 = 0.1000.
    expect(d["Net Profit Margin"]).not.toBe("0.1000");
    expect(Object.keys(d)).toHaveLength(29);
  });

  it("makes TTM rows only where four consecutive quarters stand behind", async () => {
    const q = (fy: number, p: string, date: string, rev: number) => `AAA;${fy};${p};${date};;;${rev};1`;
    const dir = folder("gap", {
      "us-income-quarterly.csv": [
        HEAD,
        q(2019, "Q3", "2019-09-30", 1),
        q(2019, "Q4", "2019-12-31", 2),
        q(2020, "Q1", "2020-03-31", 4),
        q(2020, "Q2", "2020-06-30", 8),
        // 2020 Q3 missing
        q(2020, "Q4", "2020-12-31", 16),
        q(2021, "Q1", "2021-03-31", 32),
        q(2021, "Q2", "2021-06-30", 64),
        q(2021, "Q3", "2021-09-30", 128),
      ],
    });
    const fin = (await readFundamentals(dir)).byTicker.get("AAA")!;
    // Runs: 2019 Q3..2020 Q2 → 1+2+4+8 = 15; 2020 Q4..2021 Q3 → 16+32+64+128 = 240.
    expect(fin.ttm.income.map((r) => [r["Report Date"], r.Revenue])).toEqual([
      ["2020-06-30", 15],
      ["2021-09-30", 240],
    ]);
    expect(fin.ttm.derived.map((r) => r["Net Profit Margin"])).toEqual(["0.2667", "0.0167"]); // 4/15, 4/240
  });
});
