// The price factors, each a pure function of one stock's closes (a Float64Array over the panel's
// dates, NaN where it did not trade) up to and including day `d`: nothing after `d` is read.
// Windows are in trading days of the panel: 21 a month, 126 six months, 252 a year.

export const MONTH = 21;
export const HALF_YEAR = 126;
export const YEAR = 252;

/** The last close on or before day `d` and no earlier than `floor` (NaN: none). */
export function closeOnOrBefore(close: Float64Array, d: number, floor = 0): number {
  for (let k = d; k >= Math.max(0, floor); k--) if (!Number.isNaN(close[k])) return close[k];
  return NaN;
}

/**
 * 12-1 month momentum (Jegadeesh and Titman 1993; the skipped month as in Fama-French's UMD): the
 * return from a year ago to a month ago, close(d − 21) / close(d − 252) − 1. Each end is the last
 * close on or before its day within ten days of it; NaN for a stock younger than a year.
 */
export function momentum12m1(close: Float64Array, d: number): number {
  if (d - YEAR < 0) return NaN;
  const recent = closeOnOrBefore(close, d - MONTH, d - MONTH - 10);
  const start = closeOnOrBefore(close, d - YEAR, d - YEAR - 10);
  return recent / start - 1;
}

/** Return over `days` trading days to day d: close(d) / close(d − days) − 1 (ends as in momentum12m1). */
export function trailingReturn(close: Float64Array, d: number, days: number): number {
  if (d - days < 0 || Number.isNaN(close[d])) return NaN;
  return close[d] / closeOnOrBefore(close, d - days, d - days - 10) - 1;
}

/**
 * Trend: close(d) over its 200-day moving average, minus one (Brock, Lakonishok and LeBaron 1992;
 * Faber 2007). The average is of the closes of the last 200 panel days; NaN with fewer than 150.
 */
export function trend200(close: Float64Array, d: number): number {
  if (Number.isNaN(close[d])) return NaN;
  let sum = 0;
  let n = 0;
  for (let k = Math.max(0, d - 199); k <= d; k++)
    if (!Number.isNaN(close[k])) {
      sum += close[k];
      n++;
    }
  return n < 150 ? NaN : close[d] / (sum / n) - 1;
}

/**
 * Volatility and beta over the last year (the low-volatility anomaly: Ang, Hodrick, Xing and Zhang
 * 2006; betting against beta: Frazzini and Pedersen 2014): the sample standard deviation of the
 * stock's daily returns and the OLS slope of them on the market's (`market`: its daily return per
 * panel day), over the days of (d − 252, d] with both returns; NaN with fewer than 60 such days.
 */
export function volatilityAndBeta(
  close: Float64Array,
  market: Float64Array,
  d: number,
): { volatility: number; beta: number } {
  let n = 0;
  let sx = 0;
  let sy = 0;
  let sxx = 0;
  let syy = 0;
  let sxy = 0;
  for (let k = Math.max(1, d - YEAR + 1); k <= d; k++) {
    const y = close[k] / close[k - 1] - 1;
    const x = market[k];
    if (Number.isNaN(y) || Number.isNaN(x)) continue;
    n++;
    sx += x;
    sy += y;
    sxx += x * x;
    syy += y * y;
    sxy += x * y;
  }
  if (n < 60) return { volatility: NaN, beta: NaN };
  const varY = (syy - (sy * sy) / n) / (n - 1);
  const varX = (sxx - (sx * sx) / n) / (n - 1);
  const cov = (sxy - (sx * sy) / n) / (n - 1);
  return { volatility: Math.sqrt(Math.max(0, varY)), beta: varX > 0 ? cov / varX : NaN };
}

/**
 * The market the betas are measured against: the equal-weighted mean daily return of every stock
 * trading on a day and the day before (NaN: none), over the whole panel. Equal weights need no
 * market values, which the price panel alone does not have.
 */
export function equalWeightedMarket(close: readonly Float64Array[], days: number): Float64Array {
  const sum = new Float64Array(days);
  const count = new Int32Array(days);
  for (const c of close)
    for (let k = 1; k < days; k++) {
      const r = c[k] / c[k - 1] - 1;
      if (!Number.isNaN(r)) {
        sum[k] += r;
        count[k]++;
      }
    }
  return Float64Array.from(sum, (s, k) => (count[k] ? s / count[k] : NaN));
}

/**
 * The market's regime on day d: +1 when its level (the equal-weighted returns compounded) is at or
 * above its 200-day average, −1 below, 0 with under 200 days of history.
 */
export function marketRegimes(market: Float64Array): Int8Array {
  const level = new Float64Array(market.length);
  const out = new Int8Array(market.length);
  let sum = 0;
  for (let k = 0; k < market.length; k++) {
    level[k] = (k ? level[k - 1] : 1) * (1 + (Number.isNaN(market[k]) ? 0 : market[k]));
    sum += level[k];
    if (k >= 200) sum -= level[k - 200];
    if (k >= 199) out[k] = level[k] >= sum / 200 ? 1 : -1;
  }
  return out;
}
