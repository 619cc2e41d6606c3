// Win/loss and distribution ratios, as QuantStats 0.0.62 defines them.
import { quantileSorted } from "../stats.ts";
import type { SeriesContext } from "./context.ts";
import { avgLoss, avgWin, payoff, winRate } from "./risk.ts";

function maxRun(r: ArrayLike<number>, pred: (x: number) => boolean): number {
  let best = 0, run = 0;
  for (let i = 0; i < r.length; i++) {
    run = pred(r[i]) ? run + 1 : 0;
    if (run > best) best = run;
  }
  return best;
}
export const consecutiveWins = (ctx: SeriesContext) => maxRun(ctx.r, (x) => x > 0);
export const consecutiveLosses = (ctx: SeriesContext) => maxRun(ctx.r, (x) => x < 0);

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

export const payoffRatio = (ctx: SeriesContext) => payoff(ctx.r);

export function profitFactor(ctx: SeriesContext): number {
  let gains = 0, losses = 0;
  for (const x of ctx.r) {
    if (x >= 0) gains += x;
    else losses += x;
  }
  return Math.abs(gains / losses);
}

export const tailRatio = (ctx: SeriesContext) => Math.abs(quantileSorted(ctx.sorted(), 0.95) / quantileSorted(ctx.sorted(), 0.05));
export const commonSenseRatio = (ctx: SeriesContext) => profitFactor(ctx) * tailRatio(ctx);
export const cpcIndex = (ctx: SeriesContext) => profitFactor(ctx) * winRate(ctx.r) * payoff(ctx.r);

function meanWhere(r: ArrayLike<number>, pred: (x: number) => boolean): number {
  let s = 0, k = 0;
  for (let i = 0; i < r.length; i++) if (pred(r[i])) (s += r[i]), k++;
  return k ? s / k : NaN;
}
export const outlierWinRatio = (ctx: SeriesContext) => quantileSorted(ctx.sorted(), 0.99) / meanWhere(ctx.r, (x) => x >= 0);
export const outlierLossRatio = (ctx: SeriesContext) => quantileSorted(ctx.sorted(), 0.01) / meanWhere(ctx.r, (x) => x < 0);

export const avgUpMonth = (ctx: SeriesContext) => avgWin(ctx.agg("month").returns);
export const avgDownMonth = (ctx: SeriesContext) => avgLoss(ctx.agg("month").returns);
export const winDays = (ctx: SeriesContext) => winRate(ctx.r);
export const winMonths = (ctx: SeriesContext) => winRate(ctx.agg("month").returns);
export const winQuarters = (ctx: SeriesContext) => winRate(ctx.agg("quarter").returns);
export const winYears = (ctx: SeriesContext) => winRate(ctx.agg("year").returns);
