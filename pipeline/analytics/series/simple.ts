// cumulative_return, drawdown, yearly_returns, monthly_heatmap, rolling_volatility, rolling_sharpe.

import { dateParts } from "../../shared/dates.ts";
import { aggregate } from "../aggregate.ts";
import { drawdownSeries } from "../metrics/context.ts";
import { rollingMeanStd } from "./rolling.ts";
import { each, type Named, type SeriesObject } from "./types.ts";

const num = (x: number) => (Number.isFinite(x) ? x : (null as unknown as number));

/** Compounded from the first date, whose value is 0.0. */
export const cumulativeReturn = each(({ name, returns: { dates, returns } }) => {
  let v = 1;
  const data = dates.map((date, i) => {
    v *= 1 + returns[i];
    return { date, return: v - 1 };
  });
  return { name, data };
});

/** Value / running peak − 1. */
export const drawdown = each(({ name, returns: { dates, returns } }) => {
  const dd = drawdownSeries(returns);
  return { name, data: dates.map((date, i) => ({ date, return: dd[i] })) };
});

/** Compounded per calendar year, dated YYYY-12-31. */
export const yearlyReturns = each(({ name, returns: { dates, returns } }) => {
  const a = aggregate(returns, dateParts(dates), "year");
  return { name, data: Array.from(a.keys, (y, k) => ({ date: `${y}-12-31`, return: a.returns[k] })) };
});

export function monthly(s: Named) {
  const a = aggregate(s.returns.returns, dateParts(s.returns.dates), "month");
  return Array.from(a.keys, (key, k) => {
    const year = Math.floor(key / 12);
    const month = (key % 12) + 1;
    return { date: `${year}-${String(month).padStart(2, "0")}-01`, year, month, return: a.returns[k] };
  });
}

/** Compounded per month, dated the first of the month. */
export const monthlyHeatmap = each((s) => ({ name: s.name, data: monthly(s) }));

const WINDOW = 126;
const ANN = Math.sqrt(252);

function rolling(s: Named, f: (mean: number, std: number) => number): SeriesObject {
  const { mean, std } = rollingMeanStd(s.returns.returns, WINDOW);
  return {
    name: s.name,
    window: WINDOW,
    data: Array.from(mean, (m, k) => ({ date: s.returns.dates[k + WINDOW - 1], return: num(f(m, std[k])) })),
  };
}

/** 126-day std × √252. */
export const rollingVolatility = each((s) => rolling(s, (_, sd) => sd * ANN));
/** 126-day mean / std × √252 (rf 0). */
export const rollingSharpe = each((s) => rolling(s, (m, sd) => (m / sd) * ANN));
