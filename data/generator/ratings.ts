// Monthly ratings (first trading date of each month) computed from the generated data, using only
// what was known before that date: closes up to the previous trading date and statements published
// before it. Each component is a cross-sectional percentile on 0..10; total is a weighted blend.
import type { Calendar } from "./calendar.ts";
import type { CompanyDef } from "./companies.ts";
import type { Fundamentals, PublishedQuarter } from "./fundamentals.ts";

export const RATING_COLUMNS = [
  "total_rating",
  "return_rating",
  "growth_rating",
  "risk_rating",
  "valuation_rating",
  "technical_rating",
  "macro_rating",
] as const;

/** Weights of the total rating (return, growth, risk, valuation, technical, macro). */
export const TOTAL_WEIGHTS = { return: 0.25, growth: 0.15, risk: 0.15, valuation: 0.2, technical: 0.15, macro: 0.1 };

/** Trading days of history a stock needs before it is rated. */
export const MIN_HISTORY = 63;

export interface RatingsTable {
  /** Trading-date index of each rating date. */
  dateIndex: number[];
  /** Per rating date: rated company indexes and their 7 values (RATING_COLUMNS order). */
  rows: { company: number[]; values: Float64Array[] }[];
}

/** Percentiles on 0..10 (ties share their mean rank); null inputs get the neutral 5. */
function percentile(values: (number | null)[]): number[] {
  const idx = values
    .map((v, i) => [v, i] as const)
    .filter((x): x is readonly [number, number] => x[0] !== null && Number.isFinite(x[0]));
  idx.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const out = values.map(() => 5);
  const m = idx.length;
  for (let a = 0; a < m; ) {
    let b = a;
    while (b + 1 < m && idx[b + 1][0] === idx[a][0]) b++;
    const rank = (a + b) / 2;
    for (let k = a; k <= b; k++) out[idx[k][1]] = m > 1 ? (10 * rank) / (m - 1) : 5;
    a = b + 1;
  }
  return out;
}

/** Prefix sums of a stock's closes, log returns and squared log returns (zero outside the listing). */
interface Prefix {
  close: Float64Array;
  ret: Float64Array;
  sq: Float64Array;
}

function prefixSums(c: Float64Array, n: number): Prefix {
  const pc = new Float64Array(n + 1);
  const pr = new Float64Array(n + 1);
  const ps = new Float64Array(n + 1);
  for (let t = 0; t < n; t++) {
    const x = c[t];
    const lr = t > 0 && x > 0 && c[t - 1] > 0 ? Math.log(x / c[t - 1]) : 0;
    pc[t + 1] = pc[t] + Math.max(x, 0);
    pr[t + 1] = pr[t] + lr;
    ps[t + 1] = ps[t] + lr * lr;
  }
  return { close: pc, ret: pr, sq: ps };
}

/** Trailing four quarters' revenue growth and earnings yield from the statements published so far. */
function fundamentalsAt(qs: PublishedQuarter[], q: number, cap: number) {
  let g: number | null = null;
  let ey: number | null = null;
  if (q >= 7) {
    let now = 0;
    let before = 0;
    for (let j = 0; j < 4; j++) {
      now += qs[q - j].revenue;
      before += qs[q - 4 - j].revenue;
    }
    if (before > 0) g = now / before - 1;
  }
  if (q >= 3) {
    let ni = 0;
    for (let j = 0; j < 4; j++) ni += qs[q - j].netIncome;
    ey = ni / cap;
  }
  return { g, ey };
}

/** One rating date's raw inputs of every stock rated on it. */
interface Inputs {
  rated: number[];
  ret: number[];
  mom: number[];
  vol: number[];
  tech: number[];
  growth: (number | null)[];
  value: (number | null)[];
}

/** Reads the inputs of rating date index `d` (prices to the day before, statements published before it). */
function inputsOn(
  d: number,
  cal: Calendar,
  companies: CompanyDef[],
  close: Float64Array[],
  prefix: Prefix[],
  fundamentals: Fundamentals,
  quarterPtr: number[],
): Inputs {
  const p = d - 1;
  const day = cal.dayNumbers[d];
  const x: Inputs = { rated: [], ret: [], mom: [], vol: [], tech: [], growth: [], value: [] };
  for (let i = 0; i < companies.length; i++) {
    const co = companies[i];
    const c = close[i];
    if (!(c[d] > 0) || p - co.listIndex < MIN_HISTORY) continue;
    x.rated.push(i);
    const from12 = Math.max(co.listIndex, p - 252);
    x.ret.push(c[p] / c[from12] - 1);
    x.mom.push(c[p] / c[Math.max(co.listIndex, p - 126)] - 1);
    const v0 = Math.max(co.listIndex + 1, p - 125);
    const k = p - v0 + 1;
    const mean = (prefix[i].ret[p + 1] - prefix[i].ret[v0]) / k;
    x.vol.push(Math.sqrt(Math.max(0, (prefix[i].sq[p + 1] - prefix[i].sq[v0]) / k - mean * mean)));
    const s0 = Math.max(co.listIndex, p - 199);
    x.tech.push(c[p] / ((prefix[i].close[p + 1] - prefix[i].close[s0]) / (p - s0 + 1)) - 1);
    const qs = fundamentals.quarters.get(co.id);
    let f: { g: number | null; ey: number | null } = { g: null, ey: null };
    if (qs) {
      let q = quarterPtr[i];
      while (q + 1 < qs.length && qs[q + 1].publishDay < day) q++;
      quarterPtr[i] = q;
      f = fundamentalsAt(qs, q, co.sharesOutstanding * c[p]);
    }
    x.growth.push(f.g);
    x.value.push(f.ey);
  }
  return x;
}

/** The seven ratings of each rated stock: component percentiles, sector momentum and the weighted total. */
function ratingsOf(x: Inputs, companies: CompanyDef[], nSectors: number): Float64Array[] {
  // Sector momentum: mean 6-month return of each sector's rated stocks, ranked across sectors.
  const sum = new Float64Array(nSectors);
  const cnt = new Float64Array(nSectors);
  x.rated.forEach((i, k) => {
    sum[companies[i].sectorIndex] += x.mom[k];
    cnt[companies[i].sectorIndex]++;
  });
  const sectorMom = Array.from(sum, (s, j) => (cnt[j] > 0 ? s / cnt[j] : null));
  const sectorRating = percentile(sectorMom);

  const rRet = percentile(x.ret);
  const rGrowth = percentile(x.growth);
  const rRisk = percentile(x.vol.map((v) => -v));
  const rValue = percentile(x.value);
  const rTech = percentile(x.tech);
  return x.rated.map((i, k) => {
    const macro = sectorRating[companies[i].sectorIndex];
    const w = TOTAL_WEIGHTS;
    const total =
      w.return * rRet[k] +
      w.growth * rGrowth[k] +
      w.risk * rRisk[k] +
      w.valuation * rValue[k] +
      w.technical * rTech[k] +
      w.macro * macro;
    return Float64Array.of(total, rRet[k], rGrowth[k], rRisk[k], rValue[k], rTech[k], macro);
  });
}

export function computeRatings(
  cal: Calendar,
  companies: CompanyDef[],
  close: Float64Array[],
  fundamentals: Fundamentals,
  firstIndex: number,
): RatingsTable {
  const n = cal.dates.length;
  const prefix = companies.map((_, i) => prefixSums(close[i], n));
  const quarterPtr = companies.map(() => -1);
  const table: RatingsTable = { dateIndex: [], rows: [] };
  const nSectors = Math.max(...companies.map((c) => c.sectorIndex)) + 1;
  for (const d of cal.monthStarts) {
    if (d < firstIndex) continue;
    const x = inputsOn(d, cal, companies, close, prefix, fundamentals, quarterPtr);
    table.dateIndex.push(d);
    table.rows.push({ company: x.rated, values: ratingsOf(x, companies, nSectors) });
  }
  return table;
}
