// A hand-built company (fixtures/company): three fiscal years and eight quarters. Every expected
// figure below is worked out by hand from the fixture rows, in the comment next to it.
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { readFundamentals } from "../../pipeline/sources/fundamentals.ts";
import type { CompanyFinancials, FinancialRow } from "../../pipeline/store/snapshot/model.ts";

const DIR = join(import.meta.dirname, "fixtures", "company");
let tst: CompanyFinancials;
let xyz: CompanyFinancials;
beforeAll(async () => {
  const got = await readFundamentals(DIR);
  expect(got.rejects).toEqual([]);
  expect([...got.byTicker.keys()]).toEqual(["TST", "XYZ"]);
  tst = got.byTicker.get("TST")!;
  xyz = got.byTicker.get("XYZ")!;
});

const year = (rows: FinancialRow[], fy: number) => rows.find((r) => r["Fiscal Year"] === fy)!;
const at = (rows: FinancialRow[], date: string) => rows.find((r) => r["Report Date"] === date)!;

describe("annual statements", () => {
  it("keeps the latest restatement of a year, ascending by Report Date", () => {
    const income = tst.annual.income;
    expect(income.map((r) => r["Fiscal Year"])).toEqual([2019, 2020, 2021]);
    // 2020 appears twice; the row restated 2022-02-15 (revenue 1200) beats the one of 2021-02-15 (1100).
    expect(year(income, 2020).Revenue).toBe(1200);
    expect(year(income, 2020)["Net Income (Common)"]).toBe(240);
  });

  it("uses the interface's keys in order, comma-containing ones included", () => {
    expect(Object.keys(year(tst.annual.income, 2019))).toEqual([
      "Fiscal Year",
      "Fiscal Period",
      "Report Date",
      "Revenue",
      "Cost of Revenue",
      "Gross Profit",
      "Operating Expenses",
      "Operating Income (Loss)",
      "Non-Operating Income (Loss)",
      "Pretax Income (Loss)",
      "Income Tax (Expense) Benefit, Net",
      "Net Income (Common)",
    ]);
    const b = year(tst.annual.balance, 2019);
    expect(Object.keys(b).slice(0, 5)).toEqual([
      "Fiscal Year",
      "Fiscal Period",
      "Report Date",
      "Cash, Cash Equivalents & Short Term Investments",
      "Accounts & Notes Receivable",
    ]);
    expect(b["Property, Plant & Equipment, Net"]).toBe(500);
    expect(Object.keys(b)).toHaveLength(27);
    expect(Object.keys(year(tst.annual.cashflow, 2019))).toHaveLength(19);
    // The annual balance sheet says Q4, as SimFin's does.
    expect(b["Fiscal Period"]).toBe("Q4");
    expect(year(tst.annual.income, 2019)["Fiscal Period"]).toBe("FY");
  });

  it("fills the items the file lacks from their totals", () => {
    const b = year(tst.annual.balance, 2019);
    expect(b["Other Short Term Assets"]).toBe(100); // 400 − 100 − 150 − 50
    expect(b["Other Short Term Liabilities"]).toBe(50); // 200 − 100 − 50
    expect(b["Other Long Term Liabilities"]).toBe(100); // 400 − 300
    expect(b["Equity Before Minority Interest"]).toBe(400); // 400 − no minority interest
    expect(b["Other Equity"]).toBe(-30); // 400 − 200 − (−20) − 250
    expect(b["Other Long Term Assets"]).toBe(50); // given by the file, not recomputed
    const b21 = year(tst.annual.balance, 2021);
    expect(b21["Short Term Debt"]).toBeNull(); // empty cell stays null in the statement
    expect(b21["Other Short Term Liabilities"]).toBe(50); // 200 − 150 − (empty = 0)
    expect(b21["Other Equity"]).toBe(0); // 550 − 250 − (empty) − 300
    const c = year(tst.annual.cashflow, 2019);
    expect(c["Other Investing Activities"]).toBe(-10); // −100 − (−80) − (−10) − (empty)
    expect(c["Other Financing Activities"]).toBe(-5); // −25 − (−30) − 20 − (−10)
    expect(c["Net Cash from Acquisitions & Divestitures"]).toBeNull();
    // A missing total leaves its residual null (XYZ has no Total Noncurrent Liabilities).
    expect(xyz.annual.balance[0]["Other Long Term Liabilities"]).toBeNull();
    expect(xyz.annual.balance[0]["Other Short Term Assets"]).toBe(15); // 20 − 5
  });
});

describe("annual derived figures", () => {
  it("computes every figure of FY2020 (latest restatement) by its formula", () => {
    expect(year(tst.annual.derived, 2020)).toEqual({
      "Fiscal Year": 2020,
      "Fiscal Period": "FY",
      "Report Date": "2020-12-31",
      "Publish Date": "2021-02-15",
      "Restated Date": "2022-02-15", // latest of income 2022-02-15, balance 2021-02-15, cash flow 2021-02-20
      EBITDA: 360, // 300 + 60
      "Total Debt": 280, // 30 + 250
      "Free Cash Flow": 200, // 300 + (−100)
      "Gross Profit Margin": "0.4500", // 540 / 1200
      "Operating Margin": "0.2500", // 300 / 1200
      "Net Profit Margin": "0.2000", // 240 / 1200
      "Return on Equity": "0.3692", // 240 / 650 = 0.369230
      "Return on Assets": "0.2000", // 240 / 1200
      "Free Cash Flow to Net Income": "0.8333", // 200 / 240
      "Current Ratio": "2.5000", // 500 / 200
      "Liabilities to Equity Ratio": "0.8462", // 550 / 650 = 0.846153
      "Debt Ratio": "0.2333", // 280 / 1200
      "Earnings Per Share, Basic": "2.4000", // 240 / 100
      "Earnings Per Share, Diluted": "2.0000", // 240 / 120
      "Sales Per Share": "12.0000", // 1200 / 100
      "Equity Per Share": "6.5000", // 650 / 100
      "Free Cash Flow Per Share": "2.0000", // 200 / 100
      "Dividends Per Share": "0.4000", // 40 / 100
      // vs FY2019: NI>0 ✓, CFO>0 ✓, ROA .20>.15 ✓, CFO 300>NI 240 ✓, leverage 250/1200<300/1000 ✓,
      // current ratio 2.5>2.0 ✓, shares 100<=100 ✓, gross margin .45>.40 ✓, turnover 1.0>1.0 ✗ → 8
      "Piotroski F-Score": 8,
      "Return On Invested Capital": "0.2581", // 240 / (650 + 280) = 0.258064
      "Cash Return On Invested Capital": "0.2151", // 200 / 930 = 0.215053
      "Dividend Payout Ratio": "0.1667", // 40 / 240
      "Net Debt / EBITDA": "0.3611", // (280 − 150) / 360
      "Net Debt / EBIT": "0.4333", // 130 / 300
    });
  });

  it("gives null for a zero denominator or a missing input, 0 for an empty line", () => {
    const d = year(tst.annual.derived, 2021);
    expect(d["Net Debt / EBIT"]).toBeNull(); // operating income 0
    expect(d["Operating Margin"]).toBe("0.0000"); // 0 / 1200
    expect(d["Earnings Per Share, Diluted"]).toBeNull(); // Shares (Diluted) empty
    expect(d["Earnings Per Share, Basic"]).toBe("-0.0909"); // −10 / 110
    expect(d["Total Debt"]).toBe(400); // (empty short-term debt = 0) + 400
    expect(d["Dividends Per Share"]).toBe("0.0000"); // no dividends paid
    expect(d["Dividend Payout Ratio"]).toBe("0.0000"); // −0 / −10, printed without a minus
    expect(d["Free Cash Flow to Net Income"]).toBe("10.0000"); // (50 − 150) / −10
    expect(d["Net Debt / EBITDA"]).toBe("4.2857"); // (400 − 100) / (0 + 70)
    expect(d["Return On Invested Capital"]).toBe("-0.0105"); // −10 / (550 + 400)
    // vs FY2020: NI>0 ✗, CFO 50>0 ✓, ROA ✗, CFO 50 > NI −10 ✓, leverage .333>.208 ✗, current
    // ratio 2.0<2.5 ✗, shares 110>100 ✗, gross margin .40<.45 ✗, turnover 1.0=1.0 ✗ → 2
    expect(d["Piotroski F-Score"]).toBe(2);
    // The first year has no prior year to compare with.
    expect(year(tst.annual.derived, 2019)["Piotroski F-Score"]).toBeNull();
    expect(year(tst.annual.derived, 2019).EBITDA).toBe(250); // 200 + 50
  });

  it("derives what a lone balance sheet allows and nulls the rest", () => {
    const [d] = xyz.annual.derived;
    expect(d["Fiscal Period"]).toBe("Q4");
    expect(d["Total Debt"]).toBe(20); // (empty) + 20
    expect(d["Current Ratio"]).toBe("2.0000"); // 20 / 10
    expect(d["Equity Per Share"]).toBe("2.0000"); // 20 / 10 (balance sheet's shares)
    expect(d["Net Debt / EBITDA"]).toBeNull();
    expect(d.EBITDA).toBeNull();
    expect(d["Free Cash Flow"]).toBeNull();
    expect(d["Return On Invested Capital"]).toBeNull();
    expect(xyz.quarterly.income).toEqual([]);
    expect(xyz.ttm.derived).toEqual([]);
  });
});

describe("quarterly and TTM", () => {
  it("orders quarters by Report Date with periods Q1..Q4", () => {
    expect(tst.quarterly.income.map((r) => `${r["Fiscal Year"]} ${r["Fiscal Period"]}`)).toEqual([
      "2020 Q1",
      "2020 Q2",
      "2020 Q3",
      "2020 Q4",
      "2021 Q1",
      "2021 Q2",
      "2021 Q3",
      "2021 Q4",
    ]);
  });

  it("sums four consecutive quarters of flows, one TTM row per quarter end", () => {
    const ttm = tst.ttm.income;
    expect(ttm.map((r) => r["Report Date"])).toEqual([
      "2020-12-31",
      "2021-03-31",
      "2021-06-30",
      "2021-09-30",
      "2021-12-31",
    ]);
    expect(ttm.every((r) => r["Fiscal Period"] === "TTM")).toBe(true);
    const q20 = at(ttm, "2020-12-31");
    expect(q20.Revenue).toBe(1200); // 250 + 300 + 300 + 350
    expect(q20["Net Income (Common)"]).toBe(200); // 40 + 45 + 50 + 65
    expect(q20["Operating Income (Loss)"]).toBe(250); // 50 + 60 + 60 + 80
    expect(q20["Non-Operating Income (Loss)"]).toBe(-8); // a line: only Q3 reported it
    expect(q20["Operating Expenses"]).toBeNull(); // a total no quarter gave
    expect(at(ttm, "2021-03-31")["Net Income (Common)"]).toBe(190); // 45 + 50 + 65 + 30
    // 2021 Q2 lacks operating income, a total: every window holding it is null.
    expect(at(ttm, "2021-03-31")["Operating Income (Loss)"]).toBe(240); // 60 + 60 + 80 + 40
    expect(at(ttm, "2021-06-30")["Operating Income (Loss)"]).toBeNull();
    expect(at(ttm, "2021-09-30")["Non-Operating Income (Loss)"]).toBeNull(); // window 2020 Q4..2021 Q3: all empty
    const q21 = at(ttm, "2021-12-31");
    // 4×300; 120+120+110+100; 30+20+25+15
    expect([q21.Revenue, q21["Gross Profit"], q21["Net Income (Common)"]]).toEqual([1200, 450, 90]);
    const cf = at(tst.ttm.cashflow, "2021-12-31");
    expect([
      cf["Net Cash from Operating Activities"],
      cf["Change in Fixed Assets & Intangibles"],
      cf["Dividends Paid"],
    ]).toEqual([100, -120, -5]);
  });

  it("takes the balance sheet of the last quarter", () => {
    const b = at(tst.ttm.balance, "2021-12-31");
    expect(b["Fiscal Period"]).toBe("TTM");
    expect([b["Total Assets"], b["Total Equity"], b["Long Term Debt"]]).toEqual([1200, 550, 300]);
  });

  it("recomputes the derived figures from the TTM rows", () => {
    const d = at(tst.ttm.derived, "2021-12-31");
    expect(d["Fiscal Year"]).toBe(2021);
    expect(d["Fiscal Period"]).toBe("TTM");
    expect(d["Publish Date"]).toBe("2022-02-15");
    expect(d["Net Profit Margin"]).toBe("0.0750"); // 90 / 1200
    expect(d["Earnings Per Share, Basic"]).toBe("0.8182"); // 90 / 110 (last quarter's shares)
    expect(d["Dividends Per Share"]).toBe("0.0455"); // 5 / 110
    expect(d["Dividend Payout Ratio"]).toBe("0.0556"); // 5 / 90
    expect(d["Return on Equity"]).toBe("0.1636"); // 90 / 550
    expect(d["Free Cash Flow"]).toBe(-20); // 100 − 120
    expect(d.EBITDA).toBeNull(); // TTM operating income is null
    expect(d["Net Debt / EBIT"]).toBeNull();
    // vs TTM 2020 Q4: NI 90>0 ✓, CFO 100>0 ✓, ROA .075<.167 ✗, CFO 100>90 ✓, leverage .25>.208 ✗,
    // current ratio 1.6<2.5 ✗, shares 110>100 ✗, gross margin .375<.40 ✗, turnover 1=1 ✗ → 3
    expect(d["Piotroski F-Score"]).toBe(3);
    expect(at(tst.ttm.derived, "2020-12-31")["Piotroski F-Score"]).toBeNull(); // no TTM a year earlier
  });

  it("scores quarters against the same quarter a year earlier", () => {
    const d = at(tst.quarterly.derived, "2021-12-31");
    expect(d["Fiscal Period"]).toBe("Q4");
    // vs 2020 Q4: NI 15>0 ✓, CFO 20>0 ✓, ROA 15/1200<65/1200 ✗, CFO 20>15 ✓, leverage ✗, current
    // ratio 1.6<2.5 ✗, shares ✗, gross margin .333<.40 ✗, turnover .25<.292 ✗ → 3
    expect(d["Piotroski F-Score"]).toBe(3);
    // 2021 Q1 vs 2020 Q1: NI ✓, CFO ✓, ROA 30<40 ✗, CFO 20>30 ✗, leverage ✗, current ratio ✗,
    // shares ✗, gross margin .40=.40 ✗, turnover 300/1200>250/1200 ✓ → 3
    expect(at(tst.quarterly.derived, "2021-03-31")["Piotroski F-Score"]).toBe(3);
    expect(at(tst.quarterly.derived, "2020-12-31")["Piotroski F-Score"]).toBeNull(); // no 2019 Q4
  });

  it("stays JSON-serialisable", () => {
    expect(JSON.parse(JSON.stringify(tst))).toEqual(tst);
  });
});
