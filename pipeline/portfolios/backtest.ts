// The backtest (contract §5): equal weights bought at each rebalance's close, then buy and hold.
// The rebalance day's own return belongs to the holdings before it. A stock without a price
// keeps its last close (earns 0); after its last price that value is in effect cash until the
// next rebalance, where it has no close and so cannot be selected again. An empty selection
// holds cash (return 0) until the next rebalance: there is nothing to buy, and cash earns 0.
// Cost: one selection per rebalance plus O(days × held stocks) typed-array work.
import type { HoldingRow, PortfolioRules, ReturnSeries } from "../types.ts";
import { addMonthsClamped, rebalanceCalendar } from "./calendar.ts";
import { selectOnDay } from "./selection.ts";
import { tradingIndexOnOrAfter, type Universe } from "./universe.ts";

/** One rebalance: its selection, and what trading to it cost (docs/portfolios.md, "Costs and turnover"). */
export interface Rebalance {
  date: string;
  holdings: HoldingRow[];
  /** Σ|target value − value before trading| over the stocks, over the portfolio value before costs. */
  turnover: number;
  /** costBps / 10,000 × turnover: the fraction of the value before costs that the trading cost. */
  cost: number;
}

export interface PortfolioBacktest {
  rebalances: Rebalance[];
  returns: ReturnSeries; // from the first rebalance date, 0.0 there
  previousRebalanceDate: string | null;
  nextRebalanceDate: string | null; // next calendar day, not moved to a trading date
  todayDate: string | null; // latest trading date
  todayHoldings: HoldingRow[]; // selection on todayDate with the latest ratings
  /** The position after the last day: a later run with more days resumes from it (null: no rebalance yet). */
  state: BacktestState | null;
}

/**
 * Everything the daily loop carries from one day to the next, exactly (doubles as computed), so
 * resuming over new days gives the very numbers of a backtest over the whole history.
 */
export interface BacktestState {
  /** Held tickers, with their shares and the last close seen. */
  tickers: string[];
  shares: Float64Array;
  last: Float64Array;
  cash: number;
  value: number;
  /** The calendar's origin (the first rating date) and its next calendar day after the data. */
  calendarStart: string;
  nextRebalanceDate: string;
}

const empty = (u: Universe, rules: PortfolioRules): PortfolioBacktest => {
  const last = u.panel.dates.length - 1;
  return {
    rebalances: [],
    returns: { dates: [], returns: new Float64Array() },
    previousRebalanceDate: null,
    nextRebalanceDate: null,
    todayDate: last >= 0 ? u.panel.dates[last] : null,
    todayHoldings: last >= 0 ? selectOnDay(last, rules, u) : [],
    state: null,
  };
};

interface Position {
  rows: Int32Array;
  shares: Float64Array;
  last: Float64Array;
  cash: number;
  value: number;
}

/**
 * The traded value of moving `pos` (worth `v` before trading) to equal targets of v / k in `rows`:
 * Σ|target − value before| over the stocks held before or after (a stock sold has target 0).
 */
function tradedValue(pos: Position, rows: Int32Array, v: number): number {
  const before = new Map<number, number>();
  for (let j = 0; j < pos.rows.length; j++)
    before.set(pos.rows[j], (before.get(pos.rows[j]) ?? 0) + pos.shares[j] * pos.last[j]);
  const target = rows.length > 0 ? v / rows.length : 0;
  let traded = 0;
  for (const r of rows) {
    traded += Math.abs(target - (before.get(r) ?? 0));
    before.delete(r);
  }
  for (const rest of before.values()) traded += Math.abs(rest);
  return traded;
}

/**
 * The daily loop over days `from`..end of `u`: marks `pos` to market each day (the rebalance
 * day's own return too), then rebalances where flagged, paying costBps of the traded value out of
 * the portfolio at that close (so the day's return is net of it). Returns the days' returns; `pos` moves.
 */
function runDays(
  pos: Position,
  from: number,
  isRebalance: Uint8Array,
  rules: PortfolioRules,
  u: Universe,
  firstIsStart: boolean,
) {
  const dates = u.panel.dates;
  const close = u.panel.close;
  const returns = new Float64Array(dates.length - from);
  const rebalances: Rebalance[] = [];
  const rate = (rules.costBps ?? 0) / 10_000;
  for (let d = from; d < dates.length; d++) {
    let v = pos.cash;
    for (let j = 0; j < pos.rows.length; j++) {
      const px = close[pos.rows[j]][d];
      if (!Number.isNaN(px)) pos.last[j] = px;
      v += pos.shares[j] * pos.last[j];
    }
    // The value index starts at 1 before the first purchase (the first rebalance pays for it).
    const before = d === from && firstIsStart ? v : pos.value;
    if (isRebalance[d]) {
      const holdings = selectOnDay(d, rules, u);
      const rows = Int32Array.from(holdings, (h) => u.tickerIndex.get(h.ticker)!);
      const turnover = v > 0 ? tradedValue(pos, rows, v) / v : 0;
      rebalances.push({ date: dates[d], holdings, turnover, cost: rate * turnover });
      // Without costs v is untouched: every number stays what it was before costs existed.
      if (rate > 0) v -= rate * turnover * v;
      const k = holdings.length;
      pos.rows = rows;
      pos.last = Float64Array.from(holdings, (h) => h.price);
      pos.shares = Float64Array.from(holdings, (h) => v / k / h.price);
      pos.cash = k === 0 ? v : 0;
    }
    returns[d - from] = d === from && firstIsStart && v === before ? 0 : v / before - 1;
    pos.value = v;
  }
  return { returns, rebalances };
}

const stateOf = (pos: Position, u: Universe, calendarStart: string, nextRebalanceDate: string): BacktestState => ({
  tickers: Array.from(pos.rows, (r) => u.panel.tickers[r]),
  shares: pos.shares,
  last: pos.last,
  cash: pos.cash,
  value: pos.value,
  calendarStart,
  nextRebalanceDate,
});

export function backtestPortfolio(rules: PortfolioRules, u: Universe): PortfolioBacktest {
  const dates = u.panel.dates;
  if (u.ratingDates.length === 0 || dates.length === 0) return empty(u, rules);
  // Day 0 of the calendar is the first rating date itself; each day moves to a trading date.
  const cal = rebalanceCalendar(u.ratingDates[0], rules.rebalanceFrequency, dates);
  if (cal.actual.length === 0) return empty(u, rules);
  // Flags rather than a list: two calendar days that move to one trading date (a month-long gap
  // in the data) are one rebalance.
  const isRebalance = new Uint8Array(dates.length);
  for (const day of cal.actual) isRebalance[tradingIndexOnOrAfter(dates, day)] = 1;
  const start = tradingIndexOnOrAfter(dates, cal.actual[0]);
  // Current position: panel row, shares, and the last close seen, per held stock; the value is
  // normalised to 1 at the first rebalance.
  const pos: Position = {
    rows: new Int32Array(0),
    shares: new Float64Array(0),
    last: new Float64Array(0),
    cash: 1,
    value: 1,
  };
  const { returns, rebalances } = runDays(pos, start, isRebalance, rules, u, true);
  const today = dates.length - 1;
  // The calendar stops at the first day past the data: that is the next rebalance.
  const next = cal.scheduled.at(-1)!;
  return {
    rebalances,
    returns: { dates: dates.slice(start), returns },
    previousRebalanceDate: rebalances.at(-1)!.date,
    nextRebalanceDate: next,
    todayDate: dates[today],
    todayHoldings: selectOnDay(today, rules, u),
    state: stateOf(pos, u, u.ratingDates[0], next),
  };
}

export interface ResumedBacktest {
  /** The new days' returns and rebalances only. */
  rebalances: Rebalance[];
  returns: ReturnSeries;
  /** The last new rebalance, or null when none fell in the new days. */
  previousRebalanceDate: string | null;
  nextRebalanceDate: string;
  todayDate: string;
  todayHoldings: HoldingRow[];
  state: BacktestState;
}

/**
 * The backtest continued over the days of `u` (all after the state's last day; its panel has a
 * row for every held ticker and its ratings as of each of those days): the same loop from the
 * same carried numbers, so the returns equal a whole-history backtest's bit for bit.
 */
export function resumeBacktest(rules: PortfolioRules, state: BacktestState, u: Universe): ResumedBacktest {
  const dates = u.panel.dates;
  const isRebalance = new Uint8Array(dates.length);
  // Calendar day k is counted from the origin, so find the k of the pending day, then walk on.
  let k = 0;
  while (addMonthsClamped(state.calendarStart, k * rules.rebalanceFrequency) < state.nextRebalanceDate) k++;
  let next: string;
  for (; ; k++) {
    next = addMonthsClamped(state.calendarStart, k * rules.rebalanceFrequency);
    const i = tradingIndexOnOrAfter(dates, next);
    if (i >= dates.length) break;
    isRebalance[i] = 1;
  }
  const pos: Position = {
    rows: Int32Array.from(state.tickers, (t) => u.tickerIndex.get(t)!),
    shares: Float64Array.from(state.shares),
    last: Float64Array.from(state.last),
    cash: state.cash,
    value: state.value,
  };
  const { returns, rebalances } = runDays(pos, 0, isRebalance, rules, u, false);
  const today = dates.length - 1;
  return {
    rebalances,
    returns: { dates: dates.slice(), returns },
    previousRebalanceDate: rebalances.at(-1)?.date ?? null,
    nextRebalanceDate: next,
    todayDate: dates[today],
    todayHoldings: selectOnDay(today, rules, u),
    state: stateOf(pos, u, state.calendarStart, next),
  };
}
