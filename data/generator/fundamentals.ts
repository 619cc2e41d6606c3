// SimFin-layout financial statements (income, balance, cash flow; annual and quarterly) from a small
// quarterly accounting model. Every total is the sum of its parts, the balance sheet balances, cash
// on the balance sheet moves by exactly the cash-flow statement's net change, and annual flows are
// the sums of their quarters. Amounts are whole thousands of USD, written as USD integers.
import { epochDayOfIso, isoFromEpochDay, lastEpochDayOfMonth } from "../../pipeline/shared/dates.ts";
import { type Calendar, indexOnOrBefore } from "./calendar.ts";
import { type CompanyDef, SECTORS, type SectorDef } from "./companies.ts";
import { Rng } from "./random.ts";

// Header lines as in the SimFin bulk files (column lists copied, no data), followed by the
// statement items of the service interface that the free SimFin files leave implicit.
const META =
  `Ticker;SimFinId;Currency;"Fiscal Year";"Fiscal Period";"Report Date";"Publish Date";"Restated ` +
  `Date";"Shares (Basic)";"Shares (Diluted)"`;
export const INCOME_ITEMS = [
  "Revenue",
  "Cost of Revenue",
  "Gross Profit",
  "Operating Expenses",
  "Selling, General & Administrative",
  "Research & Development",
  "Depreciation & Amortization",
  "Operating Income (Loss)",
  "Non-Operating Income (Loss)",
  "Interest Expense, Net",
  "Pretax Income (Loss), Adj.",
  "Abnormal Gains (Losses)",
  "Pretax Income (Loss)",
  "Income Tax (Expense) Benefit, Net",
  "Income (Loss) from Continuing Operations",
  "Net Extraordinary Gains (Losses)",
  "Net Income",
  "Net Income (Common)",
] as const;
export const BALANCE_ITEMS = [
  "Cash, Cash Equivalents & Short Term Investments",
  "Accounts & Notes Receivable",
  "Inventories",
  "Total Current Assets",
  "Property, Plant & Equipment, Net",
  "Long Term Investments & Receivables",
  "Other Long Term Assets",
  "Total Noncurrent Assets",
  "Total Assets",
  "Payables & Accruals",
  "Short Term Debt",
  "Total Current Liabilities",
  "Long Term Debt",
  "Total Noncurrent Liabilities",
  "Total Liabilities",
  "Share Capital & Additional Paid-In Capital",
  "Treasury Stock",
  "Retained Earnings",
  "Total Equity",
  "Total Liabilities & Equity",
  // interface items beyond the free files' columns
  "Other Short Term Assets",
  "Other Short Term Liabilities",
  "Other Long Term Liabilities",
  "Other Equity",
  "Equity Before Minority Interest",
] as const;
export const CASHFLOW_ITEMS = [
  "Net Income/Starting Line",
  "Depreciation & Amortization",
  "Non-Cash Items",
  "Change in Working Capital",
  "Change in Accounts Receivable",
  "Change in Inventories",
  "Change in Accounts Payable",
  "Change in Other",
  "Net Cash from Operating Activities",
  "Change in Fixed Assets & Intangibles",
  "Net Change in Long Term Investment",
  "Net Cash from Acquisitions & Divestitures",
  "Net Cash from Investing Activities",
  "Dividends Paid",
  "Cash from (Repayment of) Debt",
  "Cash from (Repurchase of) Equity",
  "Net Cash from Financing Activities",
  "Net Change in Cash",
  // interface items beyond the free files' columns
  "Other Investing Activities",
  "Other Financing Activities",
] as const;

/** Quote a header name the way SimFin does: bare when it is a single alphanumeric word. */
const quoteName = (n: string) => (/^[A-Za-z0-9]+$/.test(n) ? n : `"${n}"`);
export const HEADERS = {
  income: `${META};${INCOME_ITEMS.map(quoteName).join(";")}`,
  balance: `${META};${BALANCE_ITEMS.map(quoteName).join(";")}`,
  cashflow: `${META};${CASHFLOW_ITEMS.map(quoteName).join(";")}`,
};

type Statement = "income" | "balance" | "cashflow";
type Values = (number | null)[];

export interface StatementRow {
  ticker: string;
  simFinId: string;
  fiscalYear: number;
  fiscalPeriod: string;
  reportDate: string;
  publishDate: string;
  restatedDate: string;
  sharesBasic: number;
  sharesDiluted: number;
  /** In thousands of USD, in the order of the statement's items; null = not reported. */
  values: Values;
}

export interface Fundamentals {
  income: { annual: StatementRow[]; quarterly: StatementRow[] };
  balance: { annual: StatementRow[]; quarterly: StatementRow[] };
  cashflow: { annual: StatementRow[]; quarterly: StatementRow[] };
  /** First-published quarterly revenue and net income per company id, ascending: what the ratings may see. */
  quarters: Map<string, PublishedQuarter[]>;
}

/** A quarter's first-published figures, in USD. */
export interface PublishedQuarter {
  publishDay: number;
  revenue: number;
  netIncome: number;
}

interface Quarter {
  fy: number;
  fp: number; // 1..4
  reportDay: number;
  publishDay: number;
  shares: number;
  income: Values;
  balance: Values;
  cashflow: Values;
}

const r = Math.round;

/**
 * The stock's return beyond the cross-section over the quarter ending on `day` (0 outside its
 * trading range): business results and the share price move together.
 */
type ExcessReturn = (day: number) => number;

/** A company's ratios, drawn once: margins, rates and the seasonal pattern of its revenue. */
interface Profile {
  c: CompanyDef;
  s: SectorDef;
  gm: number;
  rd: number;
  sga: number;
  capexPct: number;
  daRate: number;
  taxRate: number;
  divPct: number;
  seasonal: number[];
  rate: number;
}

function drawProfile(rng: Rng, c: CompanyDef): Profile {
  const s = SECTORS[c.sectorIndex];
  const gm = Math.min(0.9, Math.max(0.12, s.grossMargin + 0.06 * rng.normal()));
  const rd = s.rd > 0 ? s.rd * rng.lognormal(0, 0.3) : 0;
  // Operating margin first; SG&A is what is left of the gross margin.
  const sga = Math.max(0.02, gm - rd - rng.uniform(0.04, 0.22));
  const capexPct = s.capex * rng.lognormal(0, 0.2);
  const daRate = rng.uniform(0.05, 0.1);
  const taxRate = rng.uniform(0.15, 0.27);
  const divPct = c.paysDividend ? Math.max(0.005, (gm - sga - rd) * rng.uniform(0.2, 0.45)) : 0;
  const amp = rng.uniform(0, 0.06);
  const seasonal = [1 - amp, 1 - amp / 3, 1 + amp / 3, 1 + amp];
  const rate = rng.uniform(0.03, 0.06);
  return { c, s, gm, rd, sga, capexPct, daRate, taxRate, divPct, seasonal, rate };
}

/** The balance sheet's accounts, in thousands of USD, rolled forward quarter by quarter. */
interface Books {
  cash: number;
  ar: number;
  inv: number;
  osta: number;
  ppe: number;
  lti: number;
  olta: number;
  ap: number;
  debt: number;
  ostl: number;
  oltl: number;
  sc: number;
  ts: number;
  oe: number;
  re: number;
}

/** The opening balance sheet of a company with annual revenue run rate `R` (thousands). */
function openingBooks(rng: Rng, p: Profile, R: number): Books {
  const { c, s, gm, sga } = p;
  const cash = R * rng.uniform(0.08, 0.3);
  const ar = (R * s.dso) / 365;
  const inv = (R * (1 - gm) * s.dio) / 365;
  const osta = R * 0.03;
  const ppe = R * s.ppeIntensity * rng.lognormal(0, 0.25);
  const lti = R * rng.uniform(0, 0.3);
  const olta = R * rng.uniform(0.1, 0.8);
  const ta0 = cash + ar + inv + osta + ppe + lti + olta;
  const ap = (R * (1 - gm + sga) * 45) / 365;
  const debt = ta0 * rng.uniform(0.1, 0.4);
  const ostl = R * 0.06;
  const oltl = R * 0.08;
  const sc = ta0 * rng.uniform(0.05, 0.3);
  const ts = c.buysBack ? -ta0 * rng.uniform(0, 0.15) : 0;
  const oe = -ta0 * rng.uniform(0, 0.03);
  const b: Books = {
    ...{ cash: r(cash), ar: r(ar), inv: r(inv), osta: r(osta), ppe: r(ppe), lti: r(lti), olta: r(olta) },
    ...{ ap: r(ap), debt: r(debt), ostl: r(ostl), oltl: r(oltl), sc: r(sc), ts: r(ts), oe: r(oe), re: 0 },
  };
  // retained earnings balance the sheet
  b.re =
    b.cash + b.ar + b.inv + b.osta + b.ppe + b.lti + b.olta - (b.ap + b.debt + b.ostl + b.oltl) - b.sc - b.ts - b.oe;
  return b;
}

/** One quarter's income statement on revenue `rev`, and the figures the cash flows take from it. */
function incomeStatement(rng: Rng, p: Profile, b: Books, rev: number, marginShock: number) {
  const cogs = -r(rev * Math.min(0.97, 1 - p.gm - marginShock + 0.01 * rng.normal()));
  const gp = rev + cogs;
  const sgaQ = -r(rev * p.sga * rng.lognormal(0, 0.04));
  const rdQ = p.rd > 0 ? -r(rev * p.rd * rng.lognormal(0, 0.05)) : null;
  const opex = sgaQ + (rdQ ?? 0);
  const opInc = gp + opex;
  const interest = -r((b.debt * p.rate) / 4);
  const nonOp = interest + r(rev * 0.004 * rng.normal());
  const pretaxAdj = opInc + nonOp;
  const abnormal = rng.chance(0.025) ? -r(Math.min(b.olta * 0.5, rev * rng.uniform(0.05, 0.4))) : 0;
  const pretax = pretaxAdj + abnormal;
  const tax = pretax > 0 ? -r(pretax * p.taxRate) : r(-pretax * 0.1);
  const cont = pretax + tax;
  const ni = cont;
  const values: Values = [rev, cogs, gp, opex, sgaQ, rdQ, null, opInc, nonOp, interest, pretaxAdj, abnormal];
  values.push(pretax, tax, cont, null, ni, ni);
  return { values, cogs, sgaQ, abnormal, ni };
}
type Income = ReturnType<typeof incomeStatement>;

/** Working capital at the quarter's end and the operating cash flow. */
function operatingFlows(rng: Rng, p: Profile, b: Books, rev: number, inc: Income) {
  const { s } = p;
  const da = r((b.ppe * p.daRate) / 4);
  const sbc = r(rev * 0.012);
  const nonCash = sbc - inc.abnormal;
  const ar1 = r((rev * 4 * s.dso * rng.lognormal(0, 0.05)) / 365);
  const inv1 = r((-inc.cogs * 4 * s.dio * rng.lognormal(0, 0.05)) / 365);
  const osta1 = r(rev * 4 * 0.03 * rng.lognormal(0, 0.1));
  const ap1 = r((-(inc.cogs + inc.sgaQ) * 4 * 45 * rng.lognormal(0, 0.05)) / 365);
  const ostl1 = r(rev * 4 * 0.06 * rng.lognormal(0, 0.1));
  const chAr = -(ar1 - b.ar);
  const chInv = -(inv1 - b.inv);
  const chAp = ap1 - b.ap;
  const chOther = ostl1 - b.ostl - (osta1 - b.osta);
  const wc = chAr + chInv + chAp + chOther;
  const cfo = inc.ni + da + nonCash + wc;
  return { da, sbc, nonCash, ar1, inv1, osta1, ap1, ostl1, chAr, chInv, chAp, chOther, wc, cfo };
}

function investingFlows(rng: Rng, p: Profile, b: Books, rev: number, inc: Income) {
  const capex = r(rev * p.capexPct * rng.lognormal(0, 0.15));
  const chLti = Math.max(-b.lti, -r(rev * 0.02 * rng.normal()));
  const acq = rng.chance(0.03) ? -r(rev * rng.uniform(0.2, 1.5)) : 0;
  const otherInv = Math.min(b.olta - acq + inc.abnormal, r(rev * 0.003 * rng.normal()));
  const cfi = -capex + chLti + acq + otherInv;
  return { capex, chLti, acq, otherInv, cfi };
}

/** Dividends, buybacks, then debt that keeps cash within a sensible band of the run rate `R`. */
function financingFlows(rng: Rng, p: Profile, b: Books, R: number, rev: number, cfo: number, cfi: number) {
  const div = p.c.paysDividend ? -r(rev * p.divPct) : null;
  const buyback = p.c.buysBack ? -r(rev * rng.uniform(0, 0.07)) : 0;
  const otherFin = Math.max(-b.oltl, r(rev * 0.003 * rng.normal()));
  const preCash = b.cash + cfo + cfi + (div ?? 0) + buyback + otherFin;
  const minCash = R * 0.05;
  let debtFlow: number;
  if (preCash < minCash) debtFlow = r(minCash * 1.5 - preCash);
  else if (preCash > R * 0.6 && b.debt > 0) debtFlow = -Math.min(b.debt, r(preCash - R * 0.35));
  else debtFlow = Math.max(-b.debt, -r(preCash - minCash / 2), r(b.debt * 0.02 * rng.normal()));
  const cff = (div ?? 0) + debtFlow + buyback + otherFin;
  return { div, buyback, otherFin, debtFlow, cff };
}
type Flows = {
  op: ReturnType<typeof operatingFlows>;
  inv: ReturnType<typeof investingFlows>;
  fin: ReturnType<typeof financingFlows>;
  netChange: number;
};

function cashflowValues(p: Profile, ni: number, { op, inv, fin, netChange }: Flows): Values {
  const operating = [ni, op.da, op.nonCash, op.wc, op.chAr, p.s.dio > 0 ? op.chInv : 0, op.chAp, op.chOther, op.cfo];
  const investing = [-inv.capex, inv.chLti, inv.acq, inv.cfi];
  return [
    ...operating,
    ...investing,
    fin.div,
    fin.debtFlow,
    fin.buyback,
    fin.cff,
    netChange,
    inv.otherInv,
    fin.otherFin,
  ];
}

/** The balance sheet at the quarter's end, rolled forward from the flows (updates `b`). */
function rollForward(b: Books, inc: Income, { op, inv, fin, netChange }: Flows): void {
  b.cash += netChange;
  b.ar = op.ar1;
  b.inv = op.inv1;
  b.osta = op.osta1;
  b.ppe = b.ppe + inv.capex - op.da;
  b.lti = b.lti - inv.chLti;
  b.olta = b.olta - inv.acq - inv.otherInv + inc.abnormal;
  b.ap = op.ap1;
  b.debt += fin.debtFlow;
  b.ostl = op.ostl1;
  b.oltl += fin.otherFin;
  b.sc += op.sbc;
  b.ts += fin.buyback;
  b.re += inc.ni + (fin.div ?? 0);
}

/** The balance sheet's values with its totals; `stdFrac` of the debt is short term. */
function balanceValues(p: Profile, b: Books, stdFrac: number): Values {
  const std = r(b.debt * stdFrac);
  const ltd = b.debt - std;
  const tca = b.cash + b.ar + b.inv + b.osta;
  const tnca = b.ppe + b.lti + b.olta;
  const ta = tca + tnca;
  const tcl = b.ap + std + b.ostl;
  const tncl = ltd + b.oltl;
  const tl = tcl + tncl;
  const eq = b.sc + b.ts + b.re + b.oe;
  const assets = [b.cash, b.ar, p.s.dio > 0 ? b.inv : null, tca, b.ppe, b.lti, b.olta, tnca, ta];
  const liabilities = [b.ap, std || null, tcl, ltd, tncl, tl];
  return [...assets, ...liabilities, b.sc, b.ts, b.re, eq, tl + eq, b.osta, b.ostl, b.oltl, b.oe, eq];
}

/** Report day of fiscal quarter `fp` (1..4) of fiscal year `fy` ending in month `fyEndMonth`. */
function reportDayOf(fy: number, fp: number, fyEndMonth: number): number {
  let em = fyEndMonth - 3 * (4 - fp);
  let ey = fy;
  if (em <= 0) {
    em += 12;
    ey--;
  }
  return lastEpochDayOfMonth(ey, em);
}

/** The company's quarters from fiscal year `firstFy` to the last one published by `cutoffDay`. */
function simulateCompany(
  seed: number,
  c: CompanyDef,
  firstFy: number,
  cutoffDay: number,
  excess: ExcessReturn,
): Quarter[] {
  const rng = Rng.derive(seed, `fundamentals:${c.ticker}`);
  const p = drawProfile(rng, c);
  let R = c.revenue0 / 1000; // annual run rate, thousands
  const b = openingBooks(rng, p, R);
  const stdFrac = rng.uniform(0.03, 0.2);

  const quarters: Quarter[] = [];
  let shares = 1;
  let shock = 0;
  let marginShock = 0;
  for (let fy = firstFy; ; fy++) {
    shock = 0.5 * shock + 0.06 * rng.normal();
    const g = Math.max(-0.3, Math.min(0.6, c.growth + shock));
    for (let fp = 1; fp <= 4; fp++) {
      const reportDay = reportDayOf(fy, fp, c.fyEndMonth);
      const publishDay = reportDay + (fp === 4 ? rng.int(45, 75) : rng.int(30, 45));
      if (publishDay > cutoffDay) return quarters;

      const ex = excess(reportDay);
      marginShock = 0.75 * marginShock + 0.12 * ex;
      R *= (1 + g) ** 0.25 * Math.exp(0.015 * rng.normal() + 0.5 * ex);
      const rev = r((R / 4) * p.seasonal[fp - 1]);
      const inc = incomeStatement(rng, p, b, rev, marginShock);
      const op = operatingFlows(rng, p, b, rev, inc);
      const inv = investingFlows(rng, p, b, rev, inc);
      const fin = financingFlows(rng, p, b, R, rev, op.cfo, inv.cfi);
      const flows = { op, inv, fin, netChange: op.cfo + inv.cfi + fin.cff };
      const cashflow = cashflowValues(p, inc.ni, flows);
      rollForward(b, inc, flows);
      const balance = balanceValues(p, b, stdFrac);
      shares *= Math.exp((c.buysBack ? -0.004 : 0.002) + 0.003 * rng.normal());
      quarters.push({ fy, fp, reportDay, publishDay, shares, income: inc.values, balance, cashflow });
    }
  }
}

function sumValues(rows: Values[]): Values {
  return rows[0].map((v, j) =>
    v === null && rows.every((x) => x[j] === null) ? null : rows.reduce((s, x) => s + (x[j] ?? 0), 0),
  );
}

/** Cumulative mean daily log return of the trading stocks: the cross-section the excess is measured against. */
function meanLogReturns(cal: Calendar, close: Float64Array[]): Float64Array {
  const meanLog = new Float64Array(cal.dates.length);
  for (let t = 1; t < cal.dates.length; t++) {
    let sum = 0;
    let n = 0;
    for (const p of close)
      if (p[t] > 0 && p[t - 1] > 0) {
        sum += Math.log(p[t] / p[t - 1]);
        n++;
      }
    meanLog[t] = meanLog[t - 1] + (n > 0 ? sum / n : 0);
  }
  return meanLog;
}

/** The excess return of the stock priced `p` over the 91 days to a day. */
const excessOf =
  (cal: Calendar, p: Float64Array, meanLog: Float64Array): ExcessReturn =>
  (day) => {
    const t1 = indexOnOrBefore(cal, day);
    const t0 = indexOnOrBefore(cal, day - 91);
    if (t0 < 0 || !(p[t0] > 0) || !(p[t1] > 0)) return 0;
    return Math.log(p[t1] / p[t0]) - (meanLog[t1] - meanLog[t0]);
  };

type Rows = Record<Statement, { annual: StatementRow[]; quarterly: StatementRow[] }>;
const emptyRows = (): Rows => ({
  income: { annual: [], quarterly: [] },
  balance: { annual: [], quarterly: [] },
  cashflow: { annual: [], quarterly: [] },
});

/** A company's statement rows: every quarter, and each fiscal year whose four quarters are all there. */
function companyRows(c: CompanyDef, qs: Quarter[]): Rows {
  const scale = c.sharesOutstanding / qs[qs.length - 1].shares;
  const simFinId = String(40000 + Number(c.id) * 37);
  const dilution = 1 + 0.01 * (Number(c.id) % 3);
  // Restated Date: the filing a year later that repeats the period, when it exists.
  const restatedDay = (i: number) => (i + 4 < qs.length ? qs[i + 4].publishDay : qs[i].publishDay);
  const row = (q: Quarter, fpLabel: string, values: Values, sharesRaw: number, restated: number): StatementRow => ({
    ticker: c.ticker,
    simFinId,
    fiscalYear: q.fy,
    fiscalPeriod: fpLabel,
    reportDate: isoFromEpochDay(q.reportDay),
    publishDate: isoFromEpochDay(q.publishDay),
    restatedDate: isoFromEpochDay(restated),
    sharesBasic: Math.round((sharesRaw * scale) / 1000) * 1000,
    sharesDiluted: Math.round((sharesRaw * scale * dilution) / 1000) * 1000,
    values,
  });
  const rows = emptyRows();
  qs.forEach((q, i) => {
    rows.income.quarterly.push(row(q, `Q${q.fp}`, q.income, q.shares, restatedDay(i)));
    rows.balance.quarterly.push(row(q, `Q${q.fp}`, q.balance, q.shares, restatedDay(i)));
    rows.cashflow.quarterly.push(row(q, `Q${q.fp}`, q.cashflow, q.shares, restatedDay(i)));
    if (q.fp === 4 && i >= 3 && qs[i - 3].fp === 1) {
      const four = qs.slice(i - 3, i + 1);
      const avgShares = four.reduce((a, x) => a + x.shares, 0) / 4;
      rows.income.annual.push(row(q, "FY", sumValues(four.map((x) => x.income)), avgShares, restatedDay(i)));
      rows.balance.annual.push(row(q, "Q4", q.balance, q.shares, restatedDay(i)));
      rows.cashflow.annual.push(row(q, "FY", sumValues(four.map((x) => x.cashflow)), avgShares, restatedDay(i)));
    }
  });
  return rows;
}

/**
 * Restatements: a later filing replaces a period's figures (same Ticker, Fiscal Year and Fiscal
 * Period, a later Restated Date) of the middle fiscal year. Totals stay consistent in both versions.
 */
function restate(rows: Rows, stmt: Statement, endDay: number): void {
  const annual = rows[stmt].annual;
  const ai = Math.floor(annual.length / 2);
  const orig = annual[ai];
  const qi = rows[stmt].quarterly.findIndex((x) => x.fiscalYear === orig.fiscalYear && x.fiscalPeriod === "Q4");
  const later = isoFromEpochDay(Math.min(endDay, epochDayOfIso(orig.restatedDate) + 40));
  // One amount moves in the annual row and in its Q4 row, so the quarters still sum to the year.
  const d = stmt === "income" ? Math.round(orig.values[0]! * 0.012) : Math.round(orig.values[21]! * 0.25);
  const patch = (src: StatementRow): StatementRow => {
    const v = src.values.slice();
    if (stmt === "income") {
      v[0] = v[0]! + d; // Revenue up, Cost of Revenue down: gross profit unchanged
      v[1] = v[1]! - d;
    } else {
      v[9] = v[9]! + d; // Payables & Accruals up, Other Short Term Liabilities down
      v[21] = v[21]! - d;
    }
    return { ...src, restatedDate: later, values: v };
  };
  // Income: the newer row comes first in the file; balance: after. Either way the later Restated Date wins.
  const after = stmt === "income" ? 0 : 1;
  annual.splice(ai + after, 0, patch(orig));
  rows[stmt].quarterly.splice(qi + after, 0, patch(rows[stmt].quarterly[qi]));
}

export function buildFundamentals(
  seed: number,
  companies: CompanyDef[],
  startYear: number,
  endDay: number,
  cal: Calendar,
  close: Float64Array[],
): Fundamentals {
  const meanLog = meanLogReturns(cal, close);
  const out: Fundamentals = { ...emptyRows(), quarters: new Map() };
  const restateRng = Rng.derive(seed, "restatements");
  const withStatements = companies.filter((c) => c.hasStatements);
  const restated = restateRng
    .shuffle(withStatements.filter((c) => c.listIndex === 0 && c.delistIndex >= cal.dayNumbers.length - 1))
    .slice(0, 2);

  for (const c of withStatements) {
    const listYear = Number(isoFromEpochDay(cal.dayNumbers[c.listIndex]).slice(0, 4));
    const firstFy = Math.max(startYear, listYear) - 2;
    const cutoff = Math.min(endDay, cal.dayNumbers[c.delistIndex]);
    const excess = excessOf(cal, close[companies.indexOf(c)], meanLog);
    const qs = simulateCompany(seed, c, firstFy, cutoff, excess);
    if (qs.length === 0) continue;
    const rows = companyRows(c, qs);
    out.quarters.set(
      c.id,
      qs.map((q) => ({ publishDay: q.publishDay, revenue: q.income[0]! * 1000, netIncome: q.income[16]! * 1000 })),
    );
    const k = restated.indexOf(c);
    if (k >= 0) restate(rows, k === 0 ? "income" : "balance", endDay);
    for (const st of ["income", "balance", "cashflow"] as const) {
      out[st].annual.push(...rows[st].annual);
      out[st].quarterly.push(...rows[st].quarterly);
    }
  }
  return out;
}

export function statementLine(row: StatementRow): string {
  let s =
    `${row.ticker};${row.simFinId};USD;${row.fiscalYear};${row.fiscalPeriod};${row.reportDate};` +
    `${row.publishDate};${row.restatedDate};${row.sharesBasic};${row.sharesDiluted}`;
  for (const v of row.values) s += v === null ? ";" : `;${v === 0 ? 0 : v * 1000}`;
  return s;
}
