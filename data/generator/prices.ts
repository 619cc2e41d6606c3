// Daily prices from a factor model: market + sector + stock-specific moves, each with fat tails
// (Student-t), a slowly varying market volatility regime shared by all, and per-stock drift.
// Open/high/low are drawn around the close so that low <= open, close <= high after rounding.
import type { Calendar } from "./calendar.ts";
import type { CompanyDef } from "./companies.ts";
import { SECTORS } from "./companies.ts";
import { Rng } from "./random.ts";

export interface PricePanel {
  /** Rounded prices as written; NaN where the stock does not trade. */
  open: Float64Array[];
  high: Float64Array[];
  low: Float64Array[];
  close: Float64Array[];
  volume: Float64Array[];
}

const TD = 252;
const MARKET_DRIFT = 0.085; // yearly, arithmetic
const MARKET_VOL = 0.16;
/** Yearly log growth of the market factor over the whole sample. */
const MARKET_TARGET = 0.075;
const SECTOR_VOL = 0.09;
const MIN_PRICE = 0.05;
const GIANT_CAP = 1.2e12;
const MAX_LOG_MOVE = 0.6;

/** Prices below one dollar keep 4 decimals, others 2. */
export function roundPrice(x: number): number {
  return x < 1 ? Math.round(x * 10000) / 10000 : Math.round(x * 100) / 100;
}

/** The market's volatility regime (a multiplier per day) and the market factor's daily log returns. */
function marketFactor(seed: number, n: number): { volMult: Float64Array; market: Float64Array } {
  const mrng = Rng.derive(seed, "market");
  // Market volatility regime: AR(1) on log volatility, plus the market factor itself.
  const volMult = new Float64Array(n);
  const market = new Float64Array(n);
  let lv = 0;
  const phi = 0.985;
  const eta = 0.42 * Math.sqrt(1 - phi * phi);
  for (let t = 0; t < n; t++) {
    lv = phi * lv + eta * mrng.normal();
    volMult[t] = Math.exp(lv - 0.5 * 0.42 * 0.42);
    const sd = (MARKET_VOL / Math.sqrt(TD)) * volMult[t];
    market[t] = MARKET_DRIFT / TD - 0.5 * sd * sd + sd * mrng.fatTail();
  }
  // Pin the market's overall growth (the path, crashes included, stays random): one seed should
  // not give a decade of flat or runaway markets.
  let total = 0;
  for (let t = 1; t < n; t++) total += market[t];
  const target = (MARKET_TARGET * (n - 1)) / TD;
  for (let t = 1; t < n; t++) market[t] += (target - total) / (n - 1);
  return { volMult, market };
}

/** Each sector's factor: daily log returns in the market's volatility regime. */
function sectorFactors(seed: number, n: number, volMult: Float64Array): Float64Array[] {
  return SECTORS.map((s) => {
    const r = Rng.derive(seed, `sector:${s.name}`);
    const f = new Float64Array(n);
    const drift = 0.02 * r.normal();
    for (let t = 0; t < n; t++) {
      const sd = (SECTOR_VOL / Math.sqrt(TD)) * Math.sqrt(volMult[t]);
      f[t] = drift / TD - 0.5 * sd * sd + sd * r.fatTail();
    }
    return f;
  });
}

interface Factors {
  volMult: Float64Array;
  market: Float64Array;
  sectors: Float64Array[];
}

/** A stock's log return on day t from the factors and its own fat-tailed move, capped. */
function dayReturn(r: Rng, c: CompanyDef, f: Factors, t: number, logP: number): number {
  const sd = (c.idioVol / Math.sqrt(TD)) * Math.sqrt(f.volMult[t]);
  let ret =
    c.alpha / TD -
    0.5 * sd * sd +
    c.beta * f.market[t] +
    c.sectorLoading * f.sectors[c.sectorIndex][t] +
    sd * r.fatTail();
  if (logP < 0) ret += 0.003; // distressed names drift back up rather than vanish
  // Size gravity: giants grow slower, so no company runs away with the index.
  const cap = c.sharesOutstanding * Math.exp(logP);
  if (cap > GIANT_CAP) ret -= (0.15 / TD) * Math.log(cap / GIANT_CAP);
  return Math.max(-MAX_LOG_MOVE, Math.min(MAX_LOG_MOVE, ret));
}

/** One stock's bars over its trading range (NaN outside it). */
function stockBars(seed: number, c: CompanyDef, f: Factors, n: number) {
  const r = Rng.derive(seed, `stock:${c.ticker}`);
  const [open, high, low, close, volume] = Array.from({ length: 5 }, () => new Float64Array(n).fill(NaN));
  const dsd = c.idioVol / Math.sqrt(TD);
  const baseVolume = c.sharesOutstanding * c.dailyTurnover;
  let logP = Math.log(c.startPrice);
  let prevClose = NaN;
  for (let t = c.listIndex; t <= c.delistIndex; t++) {
    let ret = 0;
    if (t > c.listIndex) {
      ret = dayReturn(r, c, f, t, logP);
      logP = Math.max(Math.log(MIN_PRICE), logP + ret);
    }
    const cl = roundPrice(Math.exp(logP));
    const ref = t > c.listIndex ? prevClose : cl * Math.exp(0.01 * r.normal());
    const gapShare = 0.25 + 0.1 * r.next();
    let op = roundPrice(t > c.listIndex ? ref * Math.exp(gapShare * ret + 0.15 * dsd * r.normal()) : ref);
    if (!(op > 0)) op = cl;
    const range = dsd * Math.sqrt(f.volMult[t]) * 0.6;
    const dec = cl < 1 ? 10000 : 100;
    let hi = roundPrice(Math.max(op, cl) * Math.exp(Math.abs(r.normal()) * range));
    let lo = roundPrice(Math.min(op, cl) * Math.exp(-Math.abs(r.normal()) * range));
    // Same decimals for the whole bar, and a bar that brackets open and close.
    hi = Math.round(Math.max(hi, op, cl) * dec) / dec;
    lo = Math.round(Math.min(lo, op, cl) * dec) / dec;
    if (!(lo > 0)) lo = Math.min(op, cl);
    open[t] = op;
    high[t] = hi;
    low[t] = lo;
    close[t] = cl;
    const listing = t === c.listIndex && c.listIndex > 0 ? 4 : 1;
    volume[t] = Math.round(baseVolume * Math.exp(0.35 * r.normal()) * (1 + 12 * Math.abs(ret)) * listing);
    prevClose = cl;
  }
  return { open, high, low, close, volume };
}

export function simulatePrices(seed: number, cal: Calendar, companies: CompanyDef[]): PricePanel {
  const n = cal.dates.length;
  const { volMult, market } = marketFactor(seed, n);
  const f: Factors = { volMult, market, sectors: sectorFactors(seed, n, volMult) };
  const panel: PricePanel = { open: [], high: [], low: [], close: [], volume: [] };
  for (const c of companies) {
    const bars = stockBars(seed, c, f, n);
    panel.open.push(bars.open);
    panel.high.push(bars.high);
    panel.low.push(bars.low);
    panel.close.push(bars.close);
    panel.volume.push(bars.volume);
  }
  return panel;
}

/**
 * Cap-weighted index level on every trading date: each day's return is the return of the stocks
 * that traded the day before and that day, weighted by the previous day's market value.
 */
export function capWeightedIndex(
  panel: PricePanel,
  companies: CompanyDef[],
  nDates: number,
  base = 1000,
): Float64Array {
  const level = new Float64Array(nDates);
  level[0] = base;
  for (let t = 1; t < nDates; t++) {
    let w = 0;
    let wr = 0;
    for (let i = 0; i < companies.length; i++) {
      const p0 = panel.close[i][t - 1];
      const p1 = panel.close[i][t];
      if (p0 > 0 && p1 > 0) {
        const cap = companies[i].sharesOutstanding * p0;
        w += cap;
        wr += cap * (p1 / p0 - 1);
      }
    }
    level[t] = level[t - 1] * (1 + (w > 0 ? wr / w : 0));
  }
  return level;
}
