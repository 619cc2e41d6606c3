// The statement factors, each a pure function of the statements that count on a rating date
// (statements.ts: the latest published fiscal year, the year before it and the one three years
// before, when published by then) and the date's market value. NaN where an input is missing or a
// denominator is not positive: such a stock is rated on its other factors.
import { piotroskiFScore } from "../financials/piotroski.ts";
import { ITEM, type Statement } from "./statements.ts";

export interface StatementsAt {
  current: Statement;
  prior?: Statement;
  prior3?: Statement;
}

const item = (s: Statement | undefined, k: number) => (s ? s.v[k] : NaN);
/** An item SimFin leaves empty when it is zero (debt, cash): 0. */
const zeroIfEmpty = (s: Statement, k: number) => (Number.isNaN(s.v[k]) ? 0 : s.v[k]);
const ratio = (num: number, den: number) => (den > 0 ? num / den : NaN);

/** Market value: the date's close times the shares the latest published statement reports. */
export const marketValue = (close: number, s: Statement) => close * item(s, ITEM.shares);

/** Enterprise value: market value plus short- and long-term debt, less cash and short-term investments. */
export const enterpriseValue = (mv: number, s: Statement) =>
  mv + zeroIfEmpty(s, ITEM.shortTermDebt) + zeroIfEmpty(s, ITEM.longTermDebt) - zeroIfEmpty(s, ITEM.cash);

/** Gross profit as reported, else revenue plus the (negative) cost of revenue. */
export function grossProfit(s: Statement): number {
  const gp = item(s, ITEM.grossProfit);
  return Number.isNaN(gp) ? item(s, ITEM.revenue) + item(s, ITEM.costOfRevenue) : gp;
}

/** Free cash flow: operating cash flow plus the (negative) change in fixed assets and intangibles. */
export const freeCashFlow = (s: Statement) => item(s, ITEM.operatingCashFlow) + item(s, ITEM.capex);

// value (Basu 1977; Fama and French 1992; Loughran and Wellman 2011 for EBITDA/EV)
export const earningsYield = (s: Statement, mv: number) => ratio(item(s, ITEM.netIncome), mv);
export const bookToMarket = (s: Statement, mv: number) => ratio(item(s, ITEM.equity), mv);
export const freeCashFlowYield = (s: Statement, mv: number) => ratio(freeCashFlow(s), mv);
export function ebitdaToEv(s: Statement, mv: number): number {
  const ebitda = item(s, ITEM.operatingIncome) + zeroIfEmpty(s, ITEM.depreciation);
  return ratio(ebitda, enterpriseValue(mv, s));
}

// growth: revenue as a compound rate; earnings and free cash flow (which change sign) as the change
// scaled by the earlier year's total assets, per year
/** Compound annual revenue growth over `years`: (rev / rev_then)^(1/years) − 1. */
export function revenueGrowth(cur: Statement, then: Statement | undefined, years: number): number {
  const a = item(cur, ITEM.revenue);
  const b = item(then, ITEM.revenue);
  return a > 0 && b > 0 ? (a / b) ** (1 / years) - 1 : NaN;
}
export const earningsGrowth = (cur: Statement, then: Statement | undefined, years: number) =>
  ratio(item(cur, ITEM.netIncome) - item(then, ITEM.netIncome), years * item(then, ITEM.totalAssets));
export const freeCashFlowGrowth = (cur: Statement, then: Statement | undefined, years: number) =>
  then ? ratio(freeCashFlow(cur) - freeCashFlow(then), years * item(then, ITEM.totalAssets)) : NaN;

// returns on capital
export const returnOnEquity = (s: Statement) => ratio(item(s, ITEM.netIncome), item(s, ITEM.equity));
/** Gross profitability (Novy-Marx 2013): gross profit over total assets. */
export const grossProfitability = (s: Statement) => ratio(grossProfit(s), item(s, ITEM.totalAssets));

/**
 * Return on invested capital: operating income after tax over equity plus debt less cash. The tax
 * rate is the year's effective rate (tax over pretax income) within 0..50 %, 0 when pretax income is
 * not positive.
 */
export function returnOnInvestedCapital(s: Statement): number {
  const pretax = item(s, ITEM.pretaxIncome);
  const tax = -item(s, ITEM.incomeTax); // SimFin: an expense is negative
  const rate = pretax > 0 && Number.isFinite(tax) ? Math.min(0.5, Math.max(0, tax / pretax)) : 0;
  const invested = item(s, ITEM.equity) + zeroIfEmpty(s, ITEM.shortTermDebt) + zeroIfEmpty(s, ITEM.longTermDebt);
  return ratio(item(s, ITEM.operatingIncome) * (1 - rate), invested - zeroIfEmpty(s, ITEM.cash));
}

/** The Piotroski (2000) F-score 0..9 of the year against the year before (pipeline/financials/piotroski.ts). */
export function fScore(cur: Statement, prior: Statement | undefined): number {
  const inputs = (s: Statement) => {
    const n = (k: number) => (Number.isNaN(s.v[k]) ? null : s.v[k]);
    const gp = grossProfit(s);
    return {
      netIncome: n(ITEM.netIncome),
      operatingCashFlow: n(ITEM.operatingCashFlow),
      totalAssets: n(ITEM.totalAssets),
      longTermDebt: zeroIfEmpty(s, ITEM.longTermDebt),
      currentAssets: n(ITEM.currentAssets),
      currentLiabilities: n(ITEM.currentLiabilities),
      sharesBasic: n(ITEM.shares),
      grossProfit: Number.isNaN(gp) ? null : gp,
      revenue: n(ITEM.revenue),
    };
  };
  return piotroskiFScore(inputs(cur), prior && inputs(prior)) ?? NaN;
}

/** Leverage: short- plus long-term debt over total assets (lower is safer). */
export const leverage = (s: Statement) =>
  ratio(zeroIfEmpty(s, ITEM.shortTermDebt) + zeroIfEmpty(s, ITEM.longTermDebt), item(s, ITEM.totalAssets));
