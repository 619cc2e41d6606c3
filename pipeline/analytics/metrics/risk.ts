// Risk and risk-adjusted metrics (rf = 0, 252 periods a year), as QuantStats 0.0.62 defines them.
import { kurtosis, mean, normCdf, skew, std, sum, Z_05 } from "../stats.ts";
import type { SeriesContext } from "./context.ts";

const ANN = Math.sqrt(252);

export const volatility = (ctx: SeriesContext) => std(ctx.r) * ANN;
export const sharpe = (ctx: SeriesContext) => (mean(ctx.r) / std(ctx.r)) * ANN;
export const skewness = (ctx: SeriesContext) => skew(ctx.r);
export const kurt = (ctx: SeriesContext) => kurtosis(ctx.r);

/** Downside deviation over all n returns (Red Rock Capital's definition). */
function downside(r: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < r.length; i++) if (r[i] < 0) s += r[i] * r[i];
  return Math.sqrt(s / r.length);
}
export const sortino = (ctx: SeriesContext) => (mean(ctx.r) / downside(ctx.r)) * ANN;

/** Autocorrelation penalty: sqrt(1 + 2 Σ_{x=1}^{n−1} ((n − x)/n) |ρ₁|^x). */
export function autocorrPenalty(r: Float64Array): number {
  const n = r.length;
  const a = r.subarray(0, n - 1), b = r.subarray(1);
  const ma = mean(a), mb = mean(b);
  let sab = 0, saa = 0, sbb = 0;
  for (let i = 0; i < n - 1; i++) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) ** 2;
    sbb += (b[i] - mb) ** 2;
  }
  const coef = Math.abs(sab / Math.sqrt(saa * sbb));
  let s = 0;
  let pow = 1;
  for (let x = 1; x < n; x++) {
    pow *= coef;
    if (pow === 0) break;
    s += ((n - x) / n) * pow;
  }
  return Math.sqrt(1 + 2 * s);
}
export const smartSharpe = (ctx: SeriesContext) => (mean(ctx.r) / (std(ctx.r) * autocorrPenalty(ctx.r))) * ANN;
export const smartSortino = (ctx: SeriesContext) => (mean(ctx.r) / (downside(ctx.r) * autocorrPenalty(ctx.r))) * ANN;

/** Probabilistic Sharpe ratio against 0, with QuantStats' use of (excess) kurtosis − 3. */
export function probSharpe(ctx: SeriesContext): number {
  const base = mean(ctx.r) / std(ctx.r);
  const sk = skew(ctx.r), ku = kurtosis(ctx.r);
  const sigma = Math.sqrt((1 + 0.5 * base ** 2 - sk * base + ((ku - 3) / 4) * base ** 2) / (ctx.n - 1));
  return normCdf(base / sigma);
}

export function omega(ctx: SeriesContext): number {
  if (ctx.n < 2) return NaN;
  let up = 0, down = 0;
  for (const x of ctx.r) {
    if (x > 0) up += x;
    else if (x < 0) down -= x;
  }
  return down > 0 ? up / down : NaN;
}

/** Variance–covariance daily VaR at 95%: μ + σ Φ⁻¹(0.05); undefined for σ = 0, as in scipy. */
export function valueAtRisk(r: ArrayLike<number>): number {
  const sd = std(r);
  return sd > 0 ? mean(r) + sd * Z_05 : NaN;
}
/**
 * Expected shortfall: the mean of the returns below the VaR; when none lies below it, the VaR
 * itself, as QuantStats' `conditional_value_at_risk` falls back (per series).
 */
export function conditionalVaR(r: ArrayLike<number>): number {
  const v = valueAtRisk(r);
  let s = 0, k = 0;
  for (let i = 0; i < r.length; i++) if (r[i] < v) {
    s += r[i];
    k++;
  }
  return k ? s / k : v;
}
export const dailyVaR = (ctx: SeriesContext) => -Math.abs(valueAtRisk(ctx.r));
export const cVaR = (ctx: SeriesContext) => -Math.abs(conditionalVaR(ctx.r));

/** Share of non-zero returns that are positive. */
export function winRate(x: ArrayLike<number>): number {
  let w = 0, nz = 0;
  for (let i = 0; i < x.length; i++) {
    if (x[i] > 0) w++;
    if (x[i] !== 0) nz++;
  }
  return nz ? w / nz : 0;
}

export function avgWin(x: ArrayLike<number>): number {
  let s = 0, k = 0;
  for (let i = 0; i < x.length; i++) if (x[i] > 0) (s += x[i]), k++;
  return k ? s / k : NaN;
}
export function avgLoss(x: ArrayLike<number>): number {
  let s = 0, k = 0;
  for (let i = 0; i < x.length; i++) if (x[i] < 0) (s += x[i]), k++;
  return k ? s / k : NaN;
}
export const payoff = (x: ArrayLike<number>) => avgWin(x) / Math.abs(avgLoss(x));

export function kelly(ctx: SeriesContext): number {
  const b = payoff(ctx.r);
  const p = winRate(ctx.r);
  return (b * p - (1 - p)) / b;
}

export function riskOfRuin(ctx: SeriesContext): number {
  const w = winRate(ctx.r);
  return ((1 - w) / (1 + w)) ** ctx.n;
}

export const totalSum = (ctx: SeriesContext) => sum(ctx.r);
