// The SimFin-layout statements: headers, accounting identities on every row, quarters summing to
// the year, cash continuity, and restatements.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateSample } from "../../data/generate.ts";
import { num, readRecords, SMALL } from "./helpers.ts";

const dir = mkdtempSync(join(tmpdir(), "gen-fund-"));
beforeAll(async () => {
  await generateSample(dir, { seed: 11, ...SMALL });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Row = Record<string, string>;
const load = (name: string): Row[] => readRecords(join(dir, "fundamentals"), name, ";");
const firstLine = (name: string) => readFileSync(join(dir, "fundamentals", name), "utf8").split("\n", 1)[0];

// The header lines of the SimFin bulk files (free tier): every generated file starts with them.
const META =
  `Ticker;SimFinId;Currency;"Fiscal Year";"Fiscal Period";"Report Date";"Publish Date";"Restated ` +
  `Date";"Shares (Basic)";"Shares (Diluted)"`;
const SIMFIN = {
  income:
    `${META};Revenue;"Cost of Revenue";"Gross Profit";"Operating Expenses";"Selling, General & ` +
    `Administrative";"Research & Development";"Depreciation & Amortization";"Operating Income (Loss)";"Non-Operating ` +
    `Income (Loss)";"Interest Expense, Net";"Pretax Income (Loss), Adj.";"Abnormal Gains (Losses)";"Pretax Income ` +
    `(Loss)";"Income Tax (Expense) Benefit, Net";"Income (Loss) from Continuing Operations";"Net Extraordinary Gains ` +
    `(Losses)";"Net Income";"Net Income (Common)"`,
  balance:
    `${META};"Cash, Cash Equivalents & Short Term Investments";"Accounts & Notes ` +
    `Receivable";Inventories;"Total Current Assets";"Property, Plant & Equipment, Net";"Long Term Investments & ` +
    `Receivables";"Other Long Term Assets";"Total Noncurrent Assets";"Total Assets";"Payables & Accruals";"Short ` +
    `Term Debt";"Total Current Liabilities";"Long Term Debt";"Total Noncurrent Liabilities";"Total ` +
    `Liabilities";"Share Capital & Additional Paid-In Capital";"Treasury Stock";"Retained Earnings";"Total ` +
    `Equity";"Total Liabilities & Equity"`,
  cashflow:
    `${META};"Net Income/Starting Line";"Depreciation & Amortization";"Non-Cash Items";"Change in Working ` +
    `Capital";"Change in Accounts Receivable";"Change in Inventories";"Change in Accounts Payable";"Change in ` +
    `Other";"Net Cash from Operating Activities";"Change in Fixed Assets & Intangibles";"Net Change in Long Term ` +
    `Investment";"Net Cash from Acquisitions & Divestitures";"Net Cash from Investing Activities";"Dividends ` +
    `Paid";"Cash from (Repayment of) Debt";"Cash from (Repurchase of) Equity";"Net Cash from Financing ` +
    `Activities";"Net Change in Cash"`,
};

/** Sum of the named items of a row (empty = 0). */
const sum = (r: Row, items: string[]) => items.reduce((s, k) => s + num(r[k]), 0);

const INCOME_RULES: [string, string[]][] = [
  ["Gross Profit", ["Revenue", "Cost of Revenue"]],
  [
    "Operating Expenses",
    ["Selling, General & Administrative", "Research & Development", "Depreciation & Amortization"],
  ],
  ["Operating Income (Loss)", ["Gross Profit", "Operating Expenses"]],
  ["Pretax Income (Loss), Adj.", ["Operating Income (Loss)", "Non-Operating Income (Loss)"]],
  ["Pretax Income (Loss)", ["Pretax Income (Loss), Adj.", "Abnormal Gains (Losses)"]],
  ["Income (Loss) from Continuing Operations", ["Pretax Income (Loss)", "Income Tax (Expense) Benefit, Net"]],
  ["Net Income", ["Income (Loss) from Continuing Operations", "Net Extraordinary Gains (Losses)"]],
  ["Net Income (Common)", ["Net Income"]],
];
const BALANCE_RULES: [string, string[]][] = [
  [
    "Total Current Assets",
    [
      "Cash, Cash Equivalents & Short Term Investments",
      "Accounts & Notes Receivable",
      "Inventories",
      "Other Short Term Assets",
    ],
  ],
  [
    "Total Noncurrent Assets",
    ["Property, Plant & Equipment, Net", "Long Term Investments & Receivables", "Other Long Term Assets"],
  ],
  ["Total Assets", ["Total Current Assets", "Total Noncurrent Assets"]],
  ["Total Current Liabilities", ["Payables & Accruals", "Short Term Debt", "Other Short Term Liabilities"]],
  ["Total Noncurrent Liabilities", ["Long Term Debt", "Other Long Term Liabilities"]],
  ["Total Liabilities", ["Total Current Liabilities", "Total Noncurrent Liabilities"]],
  [
    "Equity Before Minority Interest",
    ["Share Capital & Additional Paid-In Capital", "Treasury Stock", "Retained Earnings", "Other Equity"],
  ],
  ["Total Equity", ["Equity Before Minority Interest"]],
  ["Total Liabilities & Equity", ["Total Liabilities", "Total Equity"]],
  ["Total Assets", ["Total Liabilities & Equity"]],
];
const CASHFLOW_RULES: [string, string[]][] = [
  [
    "Change in Working Capital",
    ["Change in Accounts Receivable", "Change in Inventories", "Change in Accounts Payable", "Change in Other"],
  ],
  [
    "Net Cash from Operating Activities",
    ["Net Income/Starting Line", "Depreciation & Amortization", "Non-Cash Items", "Change in Working Capital"],
  ],
  [
    "Net Cash from Investing Activities",
    [
      "Change in Fixed Assets & Intangibles",
      "Net Change in Long Term Investment",
      "Net Cash from Acquisitions & Divestitures",
      "Other Investing Activities",
    ],
  ],
  [
    "Net Cash from Financing Activities",
    [
      "Dividends Paid",
      "Cash from (Repayment of) Debt",
      "Cash from (Repurchase of) Equity",
      "Other Financing Activities",
    ],
  ],
  [
    "Net Change in Cash",
    ["Net Cash from Operating Activities", "Net Cash from Investing Activities", "Net Cash from Financing Activities"],
  ],
];

function broken(rows: Row[], rules: [string, string[]][]): string[] {
  const out: string[] = [];
  for (const r of rows)
    for (const [total, parts] of rules)
      if (num(r[total]) !== sum(r, parts)) out.push(`${r.Ticker} ${r["Fiscal Year"]} ${r["Fiscal Period"]} ${total}`);
  return out;
}

/** The latest restatement of every (Ticker, Fiscal Year, Fiscal Period). */
function latest(rows: Row[]): Map<string, Row> {
  const m = new Map<string, Row>();
  for (const r of rows) {
    const k = `${r.Ticker}|${r["Fiscal Year"]}|${r["Fiscal Period"]}`;
    const prev = m.get(k);
    if (!prev || r["Restated Date"] > prev["Restated Date"]) m.set(k, r);
  }
  return m;
}

const FILES = ["income", "balance", "cashflow"] as const;
const RULES = { income: INCOME_RULES, balance: BALANCE_RULES, cashflow: CASHFLOW_RULES };

describe("fundamentals/", () => {
  it("starts every header with the SimFin column list, semicolon-separated and quoted alike", () => {
    for (const f of FILES)
      for (const kind of ["annual", "quarterly"]) {
        const line = firstLine(`us-${f}-${kind}.csv`);
        expect(line.startsWith(SIMFIN[f])).toBe(true);
      }
  });

  it("satisfies the accounting identities on every row", () => {
    for (const f of FILES)
      for (const kind of ["annual", "quarterly"]) {
        const rows = load(`us-${f}-${kind}.csv`);
        expect(rows.length).toBeGreaterThan(0);
        expect(broken(rows, RULES[f]), `${f} ${kind}`).toEqual([]);
        for (const r of rows) {
          expect(r.Currency).toBe("USD");
          for (const [k, v] of Object.entries(r))
            if (!["Ticker", "Currency", "Fiscal Period"].includes(k) && !k.endsWith("Date") && v !== "")
              expect(v, k).toMatch(/^-?\d+$/);
        }
      }
  });

  it("uses FY for annual flows, Q4 for the annual balance sheet, Q1..Q4 for quarters, and sensible dates", () => {
    expect(new Set(load("us-income-annual.csv").map((r) => r["Fiscal Period"]))).toEqual(new Set(["FY"]));
    expect(new Set(load("us-cashflow-annual.csv").map((r) => r["Fiscal Period"]))).toEqual(new Set(["FY"]));
    expect(new Set(load("us-balance-annual.csv").map((r) => r["Fiscal Period"]))).toEqual(new Set(["Q4"]));
    for (const f of FILES) {
      const rows = load(`us-${f}-quarterly.csv`);
      expect(new Set(rows.map((r) => r["Fiscal Period"]))).toEqual(new Set(["Q1", "Q2", "Q3", "Q4"]));
      for (const r of rows) {
        expect(r["Report Date"] < r["Publish Date"]).toBe(true);
        expect(r["Publish Date"] <= r["Restated Date"]).toBe(true);
        expect(r["Restated Date"] <= "2025-12-31").toBe(true);
      }
    }
  });

  it("has quarterly flows that sum to the annual ones and an annual balance equal to Q4 (latest restatements)", () => {
    for (const f of FILES) {
      const annual = latest(load(`us-${f}-annual.csv`));
      const quarterly = latest(load(`us-${f}-quarterly.csv`));
      const items = Object.keys([...annual.values()][0]).slice(10);
      const bad: string[] = [];
      for (const a of annual.values()) {
        const q = (p: string) => quarterly.get(`${a.Ticker}|${a["Fiscal Year"]}|${p}`);
        for (const item of items) {
          const want = num(a[item]);
          const got =
            f === "balance"
              ? num(q("Q4")?.[item])
              : ["Q1", "Q2", "Q3", "Q4"].reduce((s, p) => s + num(q(p)?.[item]), 0);
          if (got !== want) bad.push(`${a.Ticker} ${a["Fiscal Year"]} ${item}`);
        }
      }
      expect(bad, f).toEqual([]);
    }
  });

  it("moves balance-sheet cash by the cash-flow statement's net change", () => {
    const balance = [...latest(load("us-balance-quarterly.csv")).values()];
    const flows = latest(load("us-cashflow-quarterly.csv"));
    const bad: string[] = [];
    for (let i = 1; i < balance.length; i++) {
      const [prev, cur] = [balance[i - 1], balance[i]];
      if (prev.Ticker !== cur.Ticker) continue;
      const cf = flows.get(`${cur.Ticker}|${cur["Fiscal Year"]}|${cur["Fiscal Period"]}`)!;
      const cashKey = "Cash, Cash Equivalents & Short Term Investments";
      if (num(cur[cashKey]) - num(prev[cashKey]) !== num(cf["Net Change in Cash"]))
        bad.push(`${cur.Ticker} ${cur["Fiscal Year"]} ${cur["Fiscal Period"]}`);
      if (num(cur[cashKey]) <= 0) bad.push(`${cur.Ticker} non-positive cash`);
    }
    expect(bad).toEqual([]);
  });

  it("repeats a few periods with a later Restated Date and different figures", () => {
    let restated = 0;
    for (const f of FILES)
      for (const kind of ["annual", "quarterly"]) {
        const groups = new Map<string, Row[]>();
        for (const r of load(`us-${f}-${kind}.csv`)) {
          const k = `${r.Ticker}|${r["Fiscal Year"]}|${r["Fiscal Period"]}`;
          groups.set(k, [...(groups.get(k) ?? []), r]);
        }
        for (const g of groups.values())
          if (g.length > 1) {
            restated++;
            expect(g).toHaveLength(2);
            expect(g[0]["Restated Date"]).not.toBe(g[1]["Restated Date"]);
            expect(JSON.stringify(g[0])).not.toBe(JSON.stringify(g[1]));
          }
      }
    expect(restated).toBeGreaterThanOrEqual(2);
  });

  it("leaves a few companies without statements", () => {
    const companies = readRecords(dir, "companies.csv");
    const withStatements = new Set(load("us-income-annual.csv").map((r) => r.Ticker));
    const without = companies.filter((c) => !withStatements.has(c.ticker));
    expect(without.length).toBeGreaterThanOrEqual(1);
    expect(without.length).toBeLessThanOrEqual(Math.ceil(companies.length * 0.1));
  });
});
