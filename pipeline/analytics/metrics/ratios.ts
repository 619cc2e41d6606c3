// Win/loss and distribution ratios, as QuantStats 0.0.62 defines them.
import type { SeriesContext } from "./context.ts";
import { avgLoss, avgWin, dailyAvgLoss, dailyPayoff, dailyWinRate, winRate } from "./risk.ts";

/** Longest run of returns above 0. */
function longestGain(r: ArrayLike<number>): number {
  let best = 0, run = 0;
  for (let i = 0; i < r.length; i++) {
    run = r[i] > 0 ? run + 1 : 0;
    if (run > best) best = run;
  }
  return best;
}
/** Longest run of returns below 0. */
function longestLoss(r: ArrayLike<number>): number {
  let best = 0, run = 0;
  for (let i = 0; i < r.length; i++) {
    run = r[i] < 0 ? run + 1 : 0;
    if (run > best) best = run;
  }
  return best;
}
export const consecutiveWins = (ctx: SeriesContext) => longestGain(ctx.r);
export const consecutiveLosses = (ctx: SeriesContext) => longestLoss(ctx.r);

/** Gain-to-pain: sum of returns over the absolute sum of the negative ones (per day or month, summed, not compounded). */
function gainToPain(x: ArrayLike<number>): number {
  let total = 0, pain = 0;
  for (let i = 0; i < x.length; i++) {
    total += x[i];
    if (x[i] < 0) pain += x[i];
  }
  return total / Math.abs(pain);
}
export const gainPain = (ctx: SeriesContext) => gainToPain(ctx.r);
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
  return ctx.memo("profitFactor", () => {
    const r = ctx.r;
    let gains = 0, losses = 0;
    for (let i = 0; i < r.length; i++) {
      const x = r[i];
      if (x >= 0) gains += x;
      else losses += x;
    }
    return Math.abs(gains / losses);
  });
}

export const tailRatio = (ctx: SeriesContext) => Math.abs(ctx.order().quantile(0.95) / ctx.order().quantile(0.05));
export const commonSenseRatio = (ctx: SeriesContext) => profitFactor(ctx) * tailRatio(ctx);
export const cpcIndex = (ctx: SeriesContext) => profitFactor(ctx) * dailyWinRate(ctx) * dailyPayoff(ctx);

/** Mean of the returns at or above 0. */
function meanOfGains(r: ArrayLike<number>): number {
  let s = 0, k = 0;
  for (let i = 0; i < r.length; i++) if (r[i] >= 0) (s += r[i]), k++;
  return k ? s / k : NaN;
}
export const outlierWinRatio = (ctx: SeriesContext) => ctx.order().quantile(0.99) / meanOfGains(ctx.r);
// the mean of the returns below 0 is avgLoss's
export const outlierLossRatio = (ctx: SeriesContext) => ctx.order().quantile(0.01) / dailyAvgLoss(ctx);

export const avgUpMonth = (ctx: SeriesContext) => avgWin(ctx.agg("month").returns);
export const avgDownMonth = (ctx: SeriesContext) => avgLoss(ctx.agg("month").returns);
export const winDays = (ctx: SeriesContext) => dailyWinRate(ctx);
export const winMonths = (ctx: SeriesContext) => winRate(ctx.agg("month").returns);
export const winQuarters = (ctx: SeriesContext) => winRate(ctx.agg("quarter").returns);
export const winYears = (ctx: SeriesContext) => winRate(ctx.agg("year").returns);
