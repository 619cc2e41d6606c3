// The resource shapes (JSON object and CSV long rows) and the real SimFin files when present.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { financialsLongRows, financialsResponse } from "../../pipeline/financials/index.ts";
import { readFundamentals } from "../../pipeline/sources/fundamentals.ts";
import type { CompanyFinancials } from "../../pipeline/store/snapshot/model.ts";

const company = { id: "c1", ticker: "TST", name: "Test Corp" };
const row = {
  "Fiscal Year": 2020,
  "Fiscal Period": "FY",
  "Report Date": "2020-12-31",
  Revenue: 10,
  "Net Income (Common)": null,
};
const fin: CompanyFinancials = {
  annual: { income: [row], balance: [], cashflow: [], derived: [] },
  quarterly: { income: [], balance: [], cashflow: [], derived: [] },
  ttm: {
    income: [],
    balance: [],
    cashflow: [],
    derived: [{ "Fiscal Year": 2021, "Fiscal Period": "TTM", "Report Date": "2021-03-31", EBITDA: 5 }],
  },
};

describe("financialsResponse", () => {
  it("names the arrays by type", () => {
    expect(financialsResponse(company, fin, "annual")).toEqual({
      id: "c1",
      ticker: "TST",
      name: "Test Corp",
      stockIncomeAnnualData: [row],
      stockBalanceAnnualData: [],
      stockCashFlowAnnualData: [],
      stockDerivedAnnualData: [],
    });
    expect(Object.keys(financialsResponse(company, fin, "quarterly"))).toEqual([
      "id",
      "ticker",
      "name",
      "stockIncomeQuarterlyData",
      "stockBalanceQuarterlyData",
      "stockCashFlowQuarterlyData",
      "stockDerivedQuarterlyData",
    ]);
    expect(financialsResponse(company, fin, "ttm").stockDerivedTtmData).toHaveLength(1);
  });

  it("answers a stock without statements with empty arrays", () => {
    const r = financialsResponse(company, undefined, "ttm");
    expect(r).toEqual({
      id: "c1",
      ticker: "TST",
      name: "Test Corp",
      stockIncomeTtmData: [],
      stockBalanceTtmData: [],
      stockCashFlowTtmData: [],
      stockDerivedTtmData: [],
    });
    expect(financialsLongRows(r, "ttm")).toEqual([]);
  });
});

describe("financialsLongRows", () => {
  it("makes one row per item, period columns repeated", () => {
    expect(financialsLongRows(financialsResponse(company, fin, "annual"), "annual")).toEqual([
      {
        statement: "income",
        "Fiscal Year": 2020,
        "Fiscal Period": "FY",
        "Report Date": "2020-12-31",
        item: "Revenue",
        value: 10,
      },
      {
        statement: "income",
        "Fiscal Year": 2020,
        "Fiscal Period": "FY",
        "Report Date": "2020-12-31",
        item: "Net Income (Common)",
        value: null,
      },
    ]);
    expect(financialsLongRows(financialsResponse(company, fin, "ttm"), "ttm")).toEqual([
      {
        statement: "derived",
        "Fiscal Year": 2021,
        "Fiscal Period": "TTM",
        "Report Date": "2021-03-31",
        item: "EBITDA",
        value: 5,
      },
    ]);
  });
});

const SIMFIN = join(import.meta.dirname, "..", "..", "..", "shared", "data", "simfin");
const haveSimfin = existsSync(join(SIMFIN, "us-income-annual.csv"));
if (!haveSimfin) console.warn(`skipping the real SimFin test: ${SIMFIN} is absent`);

describe.skipIf(!haveSimfin)(`real SimFin annual files (skipped when ${SIMFIN} is absent)`, () => {
  it("reads them without rejects, with AAPL's figures", async () => {
    const { byTicker, rejects } = await readFundamentals(SIMFIN);
    expect(rejects).toEqual([]);
    expect(byTicker.size).toBe(2283); // tickers of the 2021-04-03 vintage (SOURCES.md)
    const aapl = byTicker.get("AAPL")!;
    const income = aapl.annual.income.find((r) => r["Fiscal Year"] === 2017)!;
    expect(income.Revenue).toBe(229_234_000_000);
    expect(income["Income Tax (Expense) Benefit, Net"]).toBe(-15_738_000_000);
    const balance = aapl.annual.balance.find((r) => r["Fiscal Year"] === 2017)!;
    // 128,645 − 74,181 − 17,874 − 4,855 (millions)
    expect(balance["Other Short Term Assets"]).toBe(31_735_000_000);
    const derived = aapl.annual.derived.find((r) => r["Fiscal Year"] === 2017)!;
    expect(derived["Gross Profit Margin"]).toBe("0.3847"); // 88,186 / 229,234 = 0.38469
    expect(derived["Free Cash Flow"]).toBe(51_774_000_000); // 64,225 − 12,451 (millions)
    const dates = aapl.annual.income.map((r) => r["Report Date"] as string);
    expect(dates).toEqual([...dates].sort());
  });
});
