// Portfolio engine: rules over ratings, a backtest for the history, trades for a cash value.
import type { LevelSeries, ReturnSeries } from "../types.ts";

export { buildUniverse, type Universe } from "./universe.ts";
export { rebalanceCalendar, addMonthsClamped, type RebalanceCalendar } from "./calendar.ts";
export { selectOn, selectOnDay, sectorCap } from "./selection.ts";
export { backtestPortfolio, type PortfolioBacktest } from "./backtest.ts";
export { computeTrades, type TradeRow } from "./trades.ts";

/** Compounded value index of a return series, 1.0 on its first date (rule-based benchmarks). */
export function levelsFromReturns(r: ReturnSeries): LevelSeries {
  const levels = new Float64Array(r.returns.length);
  let v = 1;
  for (let i = 0; i < levels.length; i++) levels[i] = v *= 1 + (i === 0 ? 0 : r.returns[i]);
  return { dates: r.dates, levels };
}
