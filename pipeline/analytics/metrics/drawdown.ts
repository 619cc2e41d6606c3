// Drawdown metrics over the compounded value (QuantStats' to_drawdown_series and drawdown_details).
import type { SeriesContext } from "./context.ts";
import { cagr } from "./returns.ts";
import { conditionalVaR } from "./risk.ts";

/** numpy's round: half to even. */
const roundHalfEven = (x: number) => {
  const r = Math.round(x);
  return Math.abs(x % 1) === 0.5 ? 2 * Math.round(x / 2) : r;
};

export function maxDrawdown(ctx: SeriesContext): number {
  return ctx.memo("maxDrawdown", () => {
    const dd = ctx.drawdown();
    let m = 0;
    for (let i = 0; i < dd.length; i++) if (dd[i] < m) m = dd[i];
    return m;
  });
}

export function longestDdDays(ctx: SeriesContext): number {
  const p = ctx.drawdownPeriods();
  return p.length ? Math.max(...p.map((x) => x.days)) : NaN;
}

export function avgDrawdown(ctx: SeriesContext): number {
  const p = ctx.drawdownPeriods();
  return p.length ? p.reduce((a, x) => a + x.maxDrawdown, 0) / p.length : NaN;
}

export function avgDrawdownDays(ctx: SeriesContext): number {
  const p = ctx.drawdownPeriods();
  return p.length ? roundHalfEven(p.reduce((a, x) => a + x.days, 0) / p.length) : NaN;
}

export const calmar = (ctx: SeriesContext) => cagr(ctx) / Math.abs(maxDrawdown(ctx));

/** Recovery factor: the simple sum of returns over the max drawdown (QuantStats' definition). */
export const recoveryFactor = (ctx: SeriesContext) => Math.abs(ctx.sum()) / Math.abs(maxDrawdown(ctx));

export function ulcerIndex(ctx: SeriesContext): number {
  return ctx.memo("ulcer", () => {
    const dd = ctx.drawdown();
    let s = 0;
    for (let i = 0; i < dd.length; i++) s += dd[i] * dd[i];
    return Math.sqrt(s / (ctx.n - 1));
  });
}

/** Serenity index: sum of returns / (ulcer × pitfall), pitfall = −cVaR(drawdowns) / σ(returns). */
export function serenityIndex(ctx: SeriesContext): number {
  const pitfall = -conditionalVaR(ctx.drawdown()) / ctx.std();
  return ctx.sum() / (ulcerIndex(ctx) * pitfall);
}
