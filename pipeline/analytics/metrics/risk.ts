// Risk and risk-adjusted metrics (rf = 0, 252 periods a year), as QuantStats 0.0.62 defines them.
// The moments and win/loss figures come from the context, computed once for all the rows using them.
import { mean, normCdf, std, Z_05 } from "../stats.ts";
import type { SeriesContext } from "./context.ts";

const ANN = Math.sqrt(252);

export const volatility = (ctx: SeriesContext) => ctx.std() * ANN;
export const sharpe = (ctx: SeriesContext) => (ctx.mean() / ctx.std()) * ANN;
export const skewness = (ctx: SeriesContext) => ctx.skew();
export const kurt = (ctx: SeriesContext) => ctx.kurtosis();

/** Downside deviation over all n returns (Red Rock Capital's definition): √(Σ of the negative returns' squares / n). */
const downsideOf = (ctx: SeriesContext) => Math.sqrt(ctx.signs().downSq / ctx.n);
export const sortino = (ctx: SeriesContext) => (ctx.mean() / downsideOf(ctx)) * ANN;

/** Autocorrelation penalty: sqrt(1 + 2 Σ_{x=1}^{n−1} ((n − x)/n) |ρ₁|^x). */
export function autocorrPenalty(r: Float64Array): number {
  const n = r.length;
  const a = r.subarray(0, n - 1),
    b = r.subarray(1);
  const ma = mean(a),
    mb = mean(b);
  let sab = 0,
    saa = 0,
    sbb = 0;
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
const penalty = (ctx: SeriesContext) => ctx.memo("autocorr", () => autocorrPenalty(ctx.r));
export const smartSharpe = (ctx: SeriesContext) => (ctx.mean() / (ctx.std() * penalty(ctx))) * ANN;
export const smartSortino = (ctx: SeriesContext) => (ctx.mean() / (downsideOf(ctx) * penalty(ctx))) * ANN;

/** Probabilistic Sharpe ratio against 0, with QuantStats' use of (excess) kurtosis − 3. */
export function probSharpe(ctx: SeriesContext): number {
  const base = ctx.mean() / ctx.std();
  const sk = ctx.skew(),
    ku = ctx.kurtosis();
  const sigma = Math.sqrt((1 + 0.5 * base ** 2 - sk * base + ((ku - 3) / 4) * base ** 2) / (ctx.n - 1));
  return normCdf(base / sigma);
}

export function omega(ctx: SeriesContext): number {
  if (ctx.n < 2) return NaN;
  // Σ of the gains over Σ of the losses' sizes (negating a sum negates each of its roundings)
  const { upSum, downSum } = ctx.signs();
  const down = -downSum;
  return down > 0 ? upSum / down : NaN;
}

const varOf = (m: number, sd: number) => (sd > 0 ? m + sd * Z_05 : NaN);
/** Variance–covariance daily VaR at 95%: μ + σ Φ⁻¹(0.05); undefined for σ = 0, as in scipy. */
export function valueAtRisk(r: ArrayLike<number>): number {
  return varOf(mean(r), std(r));
}
/**
 * The mean of the returns below `v`; `v` itself when none lies below it. Without a branch per
 * return (see `signs`): x × 1 or x × 0 is added, and adding 0 leaves the sum as it was; a
 * non-finite return (x × 0 is NaN) takes the branching loop.
 */
function meanBelow(r: ArrayLike<number>, v: number): number {
  let s = 0,
    k = 0;
  for (let i = 0; i < r.length; i++) {
    const below = +(r[i] < v);
    s += r[i] * below;
    k += below;
  }
  if (Number.isNaN(s)) {
    s = 0;
    for (let i = 0; i < r.length; i++) if (r[i] < v) s += r[i];
  }
  return k ? s / k : v;
}
/**
 * Expected shortfall: the mean of the returns below the VaR; when none lies below it, the VaR
 * itself, as QuantStats' `conditional_value_at_risk` falls back (per series).
 */
export function conditionalVaR(r: ArrayLike<number>): number {
  return meanBelow(r, valueAtRisk(r));
}
const varOfCtx = (ctx: SeriesContext) => varOf(ctx.mean(), ctx.std());
export const dailyVaR = (ctx: SeriesContext) => -Math.abs(varOfCtx(ctx));
export const cVaR = (ctx: SeriesContext) => -Math.abs(meanBelow(ctx.r, varOfCtx(ctx)));

/** Share of non-zero returns that are positive. */
export function winRate(x: ArrayLike<number>): number {
  let w = 0,
    nz = 0;
  for (let i = 0; i < x.length; i++) {
    if (x[i] > 0) w++;
    if (x[i] !== 0) nz++;
  }
  return nz ? w / nz : 0;
}

export function avgWin(x: ArrayLike<number>): number {
  let s = 0,
    k = 0;
  for (let i = 0; i < x.length; i++)
    if (x[i] > 0) {
      s += x[i];
      k++;
    }
  return k ? s / k : NaN;
}
export function avgLoss(x: ArrayLike<number>): number {
  let s = 0,
    k = 0;
  for (let i = 0; i < x.length; i++)
    if (x[i] < 0) {
      s += x[i];
      k++;
    }
  return k ? s / k : NaN;
}

/** The daily series' figures (winRate, avgWin, avgLoss of its returns), from its one pass over the signs. */
export const dailyWinRate = (ctx: SeriesContext) => {
  const s = ctx.signs();
  return s.nonZero ? s.up / s.nonZero : 0;
};
export const dailyAvgLoss = (ctx: SeriesContext) => {
  const s = ctx.signs();
  return s.down ? s.downSum / s.down : NaN;
};
const dailyAvgWin = (ctx: SeriesContext) => {
  const s = ctx.signs();
  return s.up ? s.upSum / s.up : NaN;
};
/** Payoff ratio: average win over the size of the average loss. */
export const dailyPayoff = (ctx: SeriesContext) => dailyAvgWin(ctx) / Math.abs(dailyAvgLoss(ctx));

export function kelly(ctx: SeriesContext): number {
  const b = dailyPayoff(ctx);
  const p = dailyWinRate(ctx);
  return (b * p - (1 - p)) / b;
}

export function riskOfRuin(ctx: SeriesContext): number {
  const w = dailyWinRate(ctx);
  return ((1 - w) / (1 + w)) ** ctx.n;
}
