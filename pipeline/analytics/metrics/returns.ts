// Return metrics: cumulative, CAGR (calendar days / 365, per the contract), expected (geometric)
// returns, best and worst periods, and the trailing windows counted back from the last date.
import { epochDay, minusMonths } from "../../shared/dates.ts";
import { lowerBound } from "../../shared/lower-bound.ts";
import type { SeriesContext } from "./context.ts";

export function comp(r: ArrayLike<number>, from = 0, to = r.length): number {
  let v = 1;
  for (let i = from; i < to; i++) v *= 1 + r[i];
  return v - 1;
}

/** comp(ctx.r, from), the whole series' product taken once from the context. */
const compFrom = (ctx: SeriesContext, from: number) => (from === 0 ? ctx.growth() - 1 : comp(ctx.r, from));

/** CAGR of r[from..]: |1 + total|^(1 / years) − 1 with years = calendar days / 365. */
export function cagrFrom(ctx: SeriesContext, from = 0): number {
  const n = ctx.n;
  if (from >= n) return NaN;
  const years = (ctx.parts.day[n - 1] - ctx.parts.day[from]) / 365;
  return Math.abs(compFrom(ctx, from) + 1) ** (1 / years) - 1;
}

export const cumulativeReturn = (ctx: SeriesContext) => compFrom(ctx, 0);
export const cagr = (ctx: SeriesContext) => cagrFrom(ctx);

/** Geometric mean return per period (QuantStats' expected_return). */
export function geometricMean(x: ArrayLike<number>): number {
  let p = 1;
  for (let i = 0; i < x.length; i++) p *= 1 + x[i];
  return p ** (1 / x.length) - 1;
}

export const expectedDaily = (ctx: SeriesContext) => ctx.growth() ** (1 / ctx.n) - 1;
export const expectedMonthly = (ctx: SeriesContext) => geometricMean(ctx.agg("month").returns);
export const expectedYearly = (ctx: SeriesContext) => geometricMean(ctx.agg("year").returns);

const max = (x: Float64Array) => (x.length ? Math.max(...x) : NaN);
const min = (x: Float64Array) => (x.length ? Math.min(...x) : NaN);
export const bestDay = (ctx: SeriesContext) => ctx.order().at(ctx.n - 1);
export const worstDay = (ctx: SeriesContext) => ctx.order().at(0);
export const bestMonth = (ctx: SeriesContext) => max(ctx.agg("month").returns);
export const worstMonth = (ctx: SeriesContext) => min(ctx.agg("month").returns);
export const bestYear = (ctx: SeriesContext) => max(ctx.agg("year").returns);
export const worstYear = (ctx: SeriesContext) => min(ctx.agg("year").returns);

/** First index whose date is on or after epoch day `day`. */
const firstOnOrAfter = (ctx: SeriesContext, day: number): number => lowerBound(ctx.parts.day, day, false, ctx.n);

function lastDate(ctx: SeriesContext): [number, number, number] {
  const i = ctx.n - 1;
  const y = ctx.parts.year[i],
    m = ctx.parts.month[i];
  return [y, m, ctx.parts.day[i] - epochDay(y, m, 1) + 1];
}

/** Compounded return since a date (inclusive), counted back from the last date. */
const since = (ctx: SeriesContext, day: number) => compFrom(ctx, firstOnOrAfter(ctx, day));
const cagrSince = (ctx: SeriesContext, day: number) => cagrFrom(ctx, firstOnOrAfter(ctx, day));

export function mtd(ctx: SeriesContext): number {
  const [y, m] = lastDate(ctx);
  return since(ctx, epochDay(y, m, 1));
}
export function ytd(ctx: SeriesContext): number {
  return since(ctx, epochDay(lastDate(ctx)[0], 1, 1));
}
export const trailing = (months: number) => (ctx: SeriesContext) => since(ctx, minusMonths(...lastDate(ctx), months));
// QuantStats annualises "3Y" over 35 months and "5Y" over 59 (its own windows); 10Y is 10 years.
export const trailingCagr = (months: number) => (ctx: SeriesContext) =>
  cagrSince(ctx, minusMonths(...lastDate(ctx), months));
