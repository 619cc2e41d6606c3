// Each factor on a small case computed by hand (the arithmetic is in the comments).
import { describe, expect, it } from "vitest";
import * as F from "../../pipeline/ratings/fundamental-factors.ts";
import { marketRegimes, momentum12m1, trend200, volatilityAndBeta } from "../../pipeline/ratings/price-factors.ts";
import { emptyItems, ITEM, type Statement } from "../../pipeline/ratings/statements.ts";

function statement(fiscalYear: number, items: Partial<Record<keyof typeof ITEM, number>>): Statement {
  const v = emptyItems();
  for (const [k, x] of Object.entries(items)) v[ITEM[k as keyof typeof ITEM]] = x;
  return { fiscalYear, publishDate: `${fiscalYear + 1}-02-15`, v };
}

// A year's statement and the two earlier ones the growth and F-score read.
const cur = statement(2020, {
  revenue: 1000,
  costOfRevenue: -600,
  grossProfit: 400,
  operatingIncome: 200,
  pretaxIncome: 180,
  incomeTax: -45,
  netIncome: 135,
  shares: 100,
  cash: 50,
  currentAssets: 300,
  totalAssets: 2000,
  shortTermDebt: 100,
  currentLiabilities: 250,
  longTermDebt: 400,
  equity: 900,
  operatingCashFlow: 250,
  capex: -80,
  depreciation: 60,
});
const prior = statement(2019, {
  revenue: 800,
  grossProfit: 300,
  netIncome: 100,
  shares: 100,
  currentAssets: 280,
  totalAssets: 1800,
  currentLiabilities: 250,
  longTermDebt: 400,
  operatingCashFlow: 200,
  capex: -70,
});
const prior3 = statement(2017, { revenue: 512, netIncome: 60, totalAssets: 1500, operatingCashFlow: 100, capex: -40 });

describe("statement factors", () => {
  // close 20 × 100 shares
  const mv = F.marketValue(20, cur);
  it("values: market value, yields and EBITDA/EV", () => {
    expect(mv).toBe(2000);
    expect(F.earningsYield(cur, mv)).toBeCloseTo(135 / 2000, 12); // 0.0675
    expect(F.bookToMarket(cur, mv)).toBeCloseTo(0.45, 12); // 900 / 2000
    expect(F.freeCashFlowYield(cur, mv)).toBeCloseTo(0.085, 12); // (250 − 80) / 2000
    // EV = 2000 + 100 + 400 − 50 = 2450; EBITDA = 200 + 60 = 260
    expect(F.enterpriseValue(mv, cur)).toBe(2450);
    expect(F.ebitdaToEv(cur, mv)).toBeCloseTo(260 / 2450, 12);
  });

  it("growth: revenue compounded, earnings and free cash flow per year over the earlier total assets", () => {
    expect(F.revenueGrowth(cur, prior, 1)).toBeCloseTo(0.25, 12); // 1000 / 800 − 1
    expect(F.revenueGrowth(cur, prior3, 3)).toBeCloseTo(0.25, 12); // (1000 / 512)^(1/3) = 1.25
    expect(F.earningsGrowth(cur, prior, 1)).toBeCloseTo(35 / 1800, 12);
    expect(F.earningsGrowth(cur, prior3, 3)).toBeCloseTo(75 / 4500, 12); // (135 − 60) / (3 × 1500)
    expect(F.freeCashFlowGrowth(cur, prior, 1)).toBeCloseTo(40 / 1800, 12); // 170 − 130
    expect(F.freeCashFlowGrowth(cur, prior3, 3)).toBeCloseTo(110 / 4500, 12); // 170 − 60
    expect(F.revenueGrowth(cur, undefined, 1)).toBeNaN();
  });

  it("returns on capital, the F-score and leverage", () => {
    expect(F.returnOnEquity(cur)).toBeCloseTo(0.15, 12); // 135 / 900
    // tax rate 45 / 180 = 25 %: NOPAT 150 over 900 + 100 + 400 − 50 = 1350
    expect(F.returnOnInvestedCapital(cur)).toBeCloseTo(150 / 1350, 12);
    expect(F.grossProfitability(cur)).toBeCloseTo(0.2, 12); // 400 / 2000
    // all nine signals: NI>0, CFO>0, ROA 0.0675 > 0.0556, CFO > NI, LTD/TA 0.2 ≤ 0.222, CR 1.2 > 1.12,
    // shares 100 ≤ 100, GM 0.4 > 0.375, turnover 0.5 > 0.444
    expect(F.fScore(cur, prior)).toBe(9);
    // more shares than a year earlier: EQ_OFFER fails
    const diluted = statement(2019, {
      ...Object.fromEntries(Object.entries(ITEM).map(([k, i]) => [k, prior.v[i]])),
      shares: 90,
    });
    expect(F.fScore(cur, diluted)).toBe(8);
    expect(F.fScore(cur, undefined)).toBeNaN();
    expect(F.leverage(cur)).toBeCloseTo(0.25, 12); // (100 + 400) / 2000
  });

  it("gross profit from revenue and cost when not reported; NaN for a non-positive denominator", () => {
    const s = statement(2020, { revenue: 100, costOfRevenue: -30, totalAssets: 0, equity: -5, netIncome: 1 });
    expect(F.grossProfit(s)).toBe(70);
    expect(F.grossProfitability(s)).toBeNaN();
    expect(F.returnOnEquity(s)).toBeNaN();
  });
});

describe("price factors", () => {
  it("12-1 momentum: close a month ago over close a year ago", () => {
    const close = Float64Array.from({ length: 300 }, (_, k) => 100 + k);
    // d = 299: close[278] = 378, close[47] = 147
    expect(momentum12m1(close, 299)).toBeCloseTo(378 / 147 - 1, 12);
    expect(momentum12m1(close, 200)).toBeNaN(); // younger than a year
  });

  it("trend: close over the 200-day average", () => {
    const close = new Float64Array(250).fill(10);
    close[249] = 12;
    // average of days 50..249: (199 × 10 + 12) / 200 = 10.01
    expect(trend200(close, 249)).toBeCloseTo(12 / 10.01 - 1, 12);
    expect(trend200(close, 100)).toBeNaN(); // 101 closes < 150
  });

  it("volatility and beta against the market", () => {
    const market = Float64Array.from({ length: 101 }, (_, k) => (k === 0 ? NaN : k % 2 ? 0.01 : -0.01));
    const close = new Float64Array(101);
    close[0] = 100;
    for (let k = 1; k <= 100; k++) close[k] = close[k - 1] * (1 + 2 * market[k]);
    const { volatility, beta } = volatilityAndBeta(close, market, 100);
    // 100 returns of ±0.02, mean 0: sample sd = sqrt(100 × 0.0004 / 99)
    expect(volatility).toBeCloseTo(Math.sqrt(0.04 / 99), 12);
    expect(beta).toBeCloseTo(2, 12);
    expect(volatilityAndBeta(close, market, 50).beta).toBeNaN(); // 50 days < 60
  });

  it("market regime: +1 at or above the 200-day average of the level, −1 below", () => {
    const up = new Float64Array(250).fill(0.001);
    const r = marketRegimes(up);
    expect(r[198]).toBe(0);
    expect(r[249]).toBe(1);
    const down = new Float64Array(250).fill(-0.001);
    expect(marketRegimes(down)[249]).toBe(-1);
  });
});
