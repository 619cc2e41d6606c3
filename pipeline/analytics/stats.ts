// Descriptive statistics with pandas' conventions (sample std ddof 1, bias-corrected skew and
// excess kurtosis, linear-interpolated quantiles), over typed arrays.

export function sum(x: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i];
  return s;
}

export function mean(x: ArrayLike<number>): number {
  return x.length ? sum(x) / x.length : NaN;
}

export function std(x: ArrayLike<number>, ddof = 1): number {
  const n = x.length;
  if (n - ddof <= 0) return NaN;
  const m = mean(x);
  let ss = 0;
  for (let i = 0; i < n; i++) ss += (x[i] - m) ** 2;
  return Math.sqrt(ss / (n - ddof));
}

/** pandas Series.skew: adjusted Fisher–Pearson G1; 0 for a constant series. */
export function skew(x: ArrayLike<number>): number {
  const n = x.length;
  if (n < 3) return NaN;
  const m = mean(x);
  let m2 = 0, m3 = 0;
  for (let i = 0; i < n; i++) {
    const d = x[i] - m;
    m2 += d * d;
    m3 += d * d * d;
  }
  m2 /= n;
  m3 /= n;
  if (m2 <= 1e-28) return 0;
  return ((Math.sqrt(n * (n - 1)) / (n - 2)) * m3) / m2 ** 1.5;
}

/** pandas Series.kurt: bias-corrected excess kurtosis G2; 0 for a constant series. */
export function kurtosis(x: ArrayLike<number>): number {
  const n = x.length;
  if (n < 4) return NaN;
  const m = mean(x);
  let m2 = 0, m4 = 0;
  for (let i = 0; i < n; i++) {
    const d2 = (x[i] - m) ** 2;
    m2 += d2;
    m4 += d2 * d2;
  }
  if (m2 <= 1e-28) return 0;
  const adj = (3 * (n - 1) ** 2) / ((n - 2) * (n - 3));
  const numer = n * (n + 1) * (n - 1) * m4;
  const denom = (n - 2) * (n - 3) * m2 * m2;
  return numer / denom - adj;
}

/** Quantile with linear interpolation between order statistics (pandas/numpy default). */
export function quantileSorted(sorted: ArrayLike<number>, q: number): number {
  const n = sorted.length;
  if (n === 0) return NaN;
  const h = (n - 1) * q;
  const lo = Math.floor(h);
  const hi = Math.min(lo + 1, n - 1);
  return sorted[lo] + (h - lo) * (sorted[hi] - sorted[lo]);
}

export function sorted(x: ArrayLike<number>): Float64Array {
  return Float64Array.from(x).sort();
}

export function covariance(x: ArrayLike<number>, y: ArrayLike<number>): number {
  const n = x.length;
  if (n < 2) return NaN;
  const mx = mean(x), my = mean(y);
  let s = 0;
  for (let i = 0; i < n; i++) s += (x[i] - mx) * (y[i] - my);
  return s / (n - 1);
}

export function correlation(x: ArrayLike<number>, y: ArrayLike<number>): number {
  return covariance(x, y) / (std(x) * std(y));
}

/** Standard normal CDF via erfc (Numerical Recipes' Chebyshev fit, relative error < 1.2e-7). */
export function normCdf(z: number): number {
  return 0.5 * erfc(-z / Math.SQRT2);
}

function erfc(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + 0.5 * z);
  const r =
    t *
    Math.exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))));
  return x >= 0 ? r : 2 - r;
}

/** Φ⁻¹(0.05): the 95% one-sided normal quantile used by the variance-covariance VaR. */
export const Z_05 = -1.6448536269514729;
