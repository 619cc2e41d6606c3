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

/** numpy/pandas treat sums of moments below 1e-14 as floating-point noise (pandas' _zero_out_fperr). */
const fperr = (x: number) => (Math.abs(x) < 1e-14 ? 0 : x);

/** pandas Series.skew (nanskew): adjusted Fisher–Pearson G1; 0 when the variance is noise. */
export function skew(x: ArrayLike<number>): number {
  const n = x.length;
  if (n < 3) return NaN;
  const m = mean(x);
  let m2 = 0,
    m3 = 0;
  for (let i = 0; i < n; i++) {
    const d = x[i] - m;
    m2 += d * d;
    m3 += d * d * d;
  }
  m2 = fperr(m2);
  m3 = fperr(m3);
  if (m2 === 0) return 0;
  return ((n * Math.sqrt(n - 1)) / (n - 2)) * (m3 / m2 ** 1.5);
}

/** pandas Series.kurt (nankurt): bias-corrected excess kurtosis G2; 0 when the variance is noise. */
export function kurtosis(x: ArrayLike<number>): number {
  const n = x.length;
  if (n < 4) return NaN;
  const m = mean(x);
  let m2 = 0,
    m4 = 0;
  for (let i = 0; i < n; i++) {
    const d2 = (x[i] - m) ** 2;
    m2 += d2;
    m4 += d2 * d2;
  }
  const adj = (3 * (n - 1) ** 2) / ((n - 2) * (n - 3));
  const numer = fperr(n * (n + 1) * (n - 1) * m4);
  const denom = fperr((n - 2) * (n - 3) * m2 * m2);
  if (denom === 0) return 0;
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

/** Sample covariance; `mx`, `my`: the means when the caller has them already (the same numbers). */
export function covariance(x: ArrayLike<number>, y: ArrayLike<number>, mx?: number, my?: number): number {
  const n = x.length;
  if (n < 2) return NaN;
  mx ??= mean(x);
  my ??= mean(y);
  let s = 0;
  for (let i = 0; i < n; i++) s += (x[i] - mx) * (y[i] - my);
  return s / (n - 1);
}

export function correlation(x: ArrayLike<number>, y: ArrayLike<number>): number {
  return covariance(x, y) / (std(x) * std(y));
}

/**
 * Standard normal CDF as scipy computes it (Cephes ndtr: erf below |x|/√2 < 1/√2, else erfc with
 * Cephes' rational approximations), so probabilities agree with QuantStats to ~1e-16.
 */
export function normCdf(a: number): number {
  const x = a * Math.SQRT1_2;
  const z = Math.abs(x);
  if (z < Math.SQRT1_2) return 0.5 + 0.5 * erf(x);
  const y = 0.5 * erfc(z);
  return x > 0 ? 1 - y : y;
}

const polevl = (x: number, c: readonly number[]) => c.reduce((acc, k) => acc * x + k, 0);
const p1evl = (x: number, c: readonly number[]) => c.reduce((acc, k) => acc * x + k, 1);
const ERFC_P = [
  2.46196981473530512524e-10, 5.64189564831068821977e-1, 7.46321056442269912687, 4.86371970985681366614e1,
  1.96520832956077098242e2, 5.26445194995477358631e2, 9.3452852717195760754e2, 1.02755188689515710272e3,
  5.57535335369399327526e2,
];
const ERFC_Q = [
  1.32281951154744992508e1, 8.67072140885989742329e1, 3.54937778887819891062e2, 9.75708501743205489753e2,
  1.82390916687909736289e3, 2.24633760818710981792e3, 1.65666309194161350182e3, 5.57535340817727675546e2,
];
const ERFC_R = [
  5.64189583547755073984e-1, 1.27536670759978104416, 5.01905042251180477414, 6.16021097993053585195,
  7.4097426995044893916, 2.9788666537210024067,
];
const ERFC_S = [
  2.2605286322011727659, 9.39603524938001434673, 1.20489539808096656605e1, 1.70814450747565897222e1,
  9.60896809063285878198, 3.3690764510008151605,
];
const ERF_T = [
  9.60497373987051638749, 9.00260197203842689217e1, 2.23200534594684319226e3, 7.00332514112805075473e3,
  5.55923013010394962768e4,
];
const ERF_U = [
  3.35617141647503099647e1, 5.21357949780152679795e2, 4.59432382970980127987e3, 2.26290000613890934246e4,
  4.92673942608635921086e4,
];
const MAXLOG = 7.09782712893383996843e2;

function erf(x: number): number {
  if (Math.abs(x) > 1) return 1 - erfc(x);
  const z = x * x;
  return (x * polevl(z, ERF_T)) / p1evl(z, ERF_U);
}

function erfc(a: number): number {
  const x = Math.abs(a);
  if (x < 1) return 1 - erf(a);
  const z = -a * a;
  if (z < -MAXLOG) return a < 0 ? 2 : 0;
  const e = Math.exp(z);
  const y = x < 8 ? (e * polevl(x, ERFC_P)) / p1evl(x, ERFC_Q) : (e * polevl(x, ERFC_R)) / p1evl(x, ERFC_S);
  if (y === 0) return a < 0 ? 2 : 0;
  return a < 0 ? 2 - y : y;
}

/** Φ⁻¹(0.05): the 95% one-sided normal quantile used by the variance-covariance VaR. */
export const Z_05 = -1.6448536269514729;
