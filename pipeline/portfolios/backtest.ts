// The backtest (contract §5): equal weights bought at each rebalance's close, then buy and hold.
// The rebalance day's own return belongs to the holdings before it. A stock without a price
// keeps its last close (earns 0); after its last price that value is in effect cash until the
// next rebalance, where it has no close and so cannot be selected again. An empty selection
// holds cash (return 0) until the next rebalance: there is nothing to buy, and cash earns 0.
// Cost: one selection per rebalance plus O(days × held stocks) typed-array work.
import type { HoldingRow, PortfolioRules, ReturnSeries } from "../types.ts";
import { rebalanceCalendar } from "./calendar.ts";
import { selectOnDay } from "./selection.ts";
import { tradingIndexOnOrAfter, type Universe } from "./universe.ts";

export interface PortfolioBacktest {
  rebalances: { date: string; holdings: HoldingRow[] }[];
  returns: ReturnSeries; // from the first rebalance date, 0.0 there
  previousRebalanceDate: string | null;
  nextRebalanceDate: string | null; // next calendar day, not moved to a trading date
  todayDate: string | null; // latest trading date
  todayHoldings: HoldingRow[]; // selection on todayDate with the latest ratings
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
  };
};

export function backtestPortfolio(rules: PortfolioRules, u: Universe): PortfolioBacktest {
  const dates = u.panel.dates;
  const close = u.panel.close;
  if (u.ratingDates.length === 0 || dates.length === 0) return empty(u, rules);
  // Day 0 of the calendar is the first rating date itself; each day moves to a trading date.
  const cal = rebalanceCalendar(u.ratingDates[0], rules.rebalanceFrequency, dates);
  if (cal.actual.length === 0) return empty(u, rules);
  // Flags rather than a list: two calendar days that move to one trading date (a month-long gap
  // in the data) are one rebalance.
  const isRebalance = new Uint8Array(dates.length);
  for (const day of cal.actual) isRebalance[tradingIndexOnOrAfter(dates, day)] = 1;
  const start = tradingIndexOnOrAfter(dates, cal.actual[0]);
  const returns = new Float64Array(dates.length - start);
  const rebalances: PortfolioBacktest["rebalances"] = [];

  // Current position: panel row, shares, and the last close seen, per held stock.
  let rows = new Int32Array(0);
  let shares = new Float64Array(0);
  let last = new Float64Array(0);
  let cash = 1; // value is normalised to 1 at the first rebalance
  let value = 1;
  for (let d = start; d < dates.length; d++) {
    // Mark to market with the holdings carried into the day (the rebalance day's own return too).
    let v = cash;
    for (let j = 0; j < rows.length; j++) {
      const px = close[rows[j]][d];
      if (px === px) last[j] = px; // not NaN
      v += shares[j] * last[j];
    }
    returns[d - start] = d === start ? 0 : v / value - 1;
    value = v;
    if (isRebalance[d]) {
      const holdings = selectOnDay(d, rules, u);
      rebalances.push({ date: dates[d], holdings });
      const k = holdings.length;
      rows = Int32Array.from(holdings, (h) => u.tickerIndex.get(h.ticker)!);
      last = Float64Array.from(holdings, (h) => h.price);
      shares = Float64Array.from(holdings, (h) => value / k / h.price);
      cash = k === 0 ? value : 0;
    }
  }
  const today = dates.length - 1;
  return {
    rebalances,
    returns: { dates: dates.slice(start), returns },
    previousRebalanceDate: rebalances.at(-1)!.date,
    // The calendar stops at the first day past the data: that is the next rebalance.
    nextRebalanceDate: cal.scheduled.at(-1)!,
    todayDate: dates[today],
    todayHoldings: selectOnDay(today, rules, u),
  };
}
