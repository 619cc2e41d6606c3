// Win/loss and distribution ratios, as QuantStats 0.0.62 defines them.
import type { SeriesContext } from "./context.ts";
import { avgLoss, avgWin, dailyAvgLoss, dailyPayoff, dailyWinRate, winRate } from "./risk.ts";

/** Longest runs of returns above and below 0. */
export const consecutiveWins = (ctx: SeriesContext) => ctx.signs().longestUp;
export const consecutiveLosses = (ctx: SeriesContext) => ctx.signs().longestDown;

/**
 * Gain-to-pain: sum of returns over the absolute sum of the negative ones (per day or month, summed, not compounded).
 */
function gainToPain(x: ArrayLike<number>): number {
  let total = 0,
    pain = 0;
  for (let i = 0; i < x.length; i++) {
    total += x[i];
    if (x[i] < 0) pain += x[i];
  }
  return total / Math.abs(pain);
}
// the daily sum and the sum of the losses are the context's (the same loops' numbers)
export const gainPain = (ctx: SeriesContext) => ctx.sum() / Math.abs(ctx.signs().downSum);
export const gainPainMonthly = (ctx: SeriesContext) => gainToPain(monthlySums(ctx));

function monthlySums(ctx: SeriesContext): Float64Array {
  const a = ctx.agg("month");
  const out = new Float64Array(a.keys.length);
  for (let k = 0; k < a.keys.length; k++) {
    const end = k + 1 < a.first.length ? a.first[k + 1] : ctx.n;
    let s = 0;
    for (let i = a.first[k]; i < end; i++) s += ctx.r[i];
    out[k] = s;
  }
  return out;
}

export const payoffRatio = (ctx: SeriesContext) => dailyPayoff(ctx);

export function profitFactor(ctx: SeriesContext): number {
  // gains: the returns at or above 0 (the zeros add nothing); losses: those below 0
  const { upSum, downSum } = ctx.signs();
  return Math.abs(upSum / downSum);
}

export const tailRatio = (ctx: SeriesContext) => Math.abs(ctx.order().quantile(0.95) / ctx.order().quantile(0.05));
export const commonSenseRatio = (ctx: SeriesContext) => profitFactor(ctx) * tailRatio(ctx);
export const cpcIndex = (ctx: SeriesContext) => profitFactor(ctx) * dailyWinRate(ctx) * dailyPayoff(ctx);

/** Mean of the returns at or above 0. */
function meanOfGains(ctx: SeriesContext): number {
  const s = ctx.signs();
  return s.atLeastZero ? s.upSum / s.atLeastZero : NaN;
}
export const outlierWinRatio = (ctx: SeriesContext) => ctx.order().quantile(0.99) / meanOfGains(ctx);
// the mean of the returns below 0 is avgLoss's
export const outlierLossRatio = (ctx: SeriesContext) => ctx.order().quantile(0.01) / dailyAvgLoss(ctx);

export const avgUpMonth = (ctx: SeriesContext) => avgWin(ctx.agg("month").returns);
export const avgDownMonth = (ctx: SeriesContext) => avgLoss(ctx.agg("month").returns);
export const winDays = (ctx: SeriesContext) => dailyWinRate(ctx);
export const winMonths = (ctx: SeriesContext) => winRate(ctx.agg("month").returns);
export const winQuarters = (ctx: SeriesContext) => winRate(ctx.agg("quarter").returns);
export const winYears = (ctx: SeriesContext) => winRate(ctx.agg("year").returns);
