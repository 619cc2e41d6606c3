// Portfolio engine: rules over ratings, a backtest for the history, trades for a cash value,
// value indexes for rule-based benchmarks. Pure functions; the stages do the I/O.

export {
  type BacktestState,
  backtestPortfolio,
  type PortfolioBacktest,
  type Rebalance,
  type ResumedBacktest,
  resumeBacktest,
} from "./backtest.ts";
export { levelsFromReturns } from "./benchmarks.ts";
export { addMonthsClamped, type RebalanceCalendar, rebalanceCalendar } from "./calendar.ts";
export { sectorCap, selectOn, selectOnDay } from "./selection.ts";
export { computeTrades, roundHalfUp, type TradeRow } from "./trades.ts";
export { buildUniverse, type RatingSlice, rankedPositions, tradingIndexOnOrAfter, type Universe } from "./universe.ts";
