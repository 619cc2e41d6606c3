// Portfolio engine: rules over ratings, a backtest for the history, trades for a cash value,
// value indexes for rule-based benchmarks. Pure functions; the stages do the I/O.
export { buildUniverse, rankedPositions, tradingIndexOnOrAfter, type RatingSlice, type Universe } from "./universe.ts";
export { rebalanceCalendar, addMonthsClamped, type RebalanceCalendar } from "./calendar.ts";
export { selectOn, selectOnDay, sectorCap } from "./selection.ts";
export { backtestPortfolio, resumeBacktest, type BacktestState, type PortfolioBacktest, type ResumedBacktest } from "./backtest.ts";
export { computeTrades, roundHalfUp, type TradeRow } from "./trades.ts";
export { levelsFromReturns } from "./benchmarks.ts";
