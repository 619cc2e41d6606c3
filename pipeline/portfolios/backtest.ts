// The backtest (contract §5): equal weights bought at each rebalance's close, then buy and hold.
// The rebalance day's own return belongs to the holdings before it. A stock without a price
// keeps its last close (earns 0); after its last price that value is in effect cash until the
// next rebalance. An empty selection holds cash (return 0) until the next rebalance.
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

const EMPTY: PortfolioBacktest = { rebalances: [], returns: { dates: [], returns: new Float64Array() }, previousRebalanceDate: null, nextRebalanceDate: null, todayDate: null, todayHoldings: [] };

export function backtestPortfolio(rules: PortfolioRules, u: Universe): PortfolioBacktest {
  const dates = u.panel.dates;
  if (u.ratingDates.length === 0 || dates.length === 0) return EMPTY;
  const cal = rebalanceCalendar(u.ratingDates[0], rules.rebalanceFrequency, dates);
  if (cal.actual.length === 0) return EMPTY;
  const rebalanceDays = cal.actual.map((d) => tradingIndexOnOrAfter(dates, d));
  const start = rebalanceDays[0];
  const n = dates.length - start;
  const returns = new Float64Array(n);
  const rebalances: PortfolioBacktest["rebalances"] = [];

  // Current position: row index, shares, and the last close seen for each held stock.
  let rows = new Int32Array(0);
  let shares = new Float64Array(0);
  let last = new Float64Array(0);
  let cash = 1; // value is normalised to 1 at the first rebalance
  let value = 1;
  let next = 0; // index into rebalanceDays
  for (let d = start; d < dates.length; d++) {
    // Mark to market with the holdings carried into the day (the rebalance day's own return too).
    let v = cash;
    for (let j = 0; j < rows.length; j++) {
      const px = u.panel.close[rows[j]][d];
      if (!Number.isNaN(px)) last[j] = px;
      v += shares[j] * last[j];
    }
    returns[d - start] = d === start ? 0 : v / value - 1;
    value = v;
    if (next < rebalanceDays.length && rebalanceDays[next] === d) {
      const holdings = selectOnDay(d, rules, u);
      rebalances.push({ date: dates[d], holdings });
      const k = holdings.length;
      rows = Int32Array.from(holdings, (h) => u.tickerIndex.get(h.ticker)!);
      last = Float64Array.from(holdings, (h) => h.price);
      shares = Float64Array.from(holdings, (h) => value / k / h.price);
      cash = k === 0 ? value : 0;
      next++;
    }
  }
  const todayDay = dates.length - 1;
  return {
    rebalances,
    returns: { dates: dates.slice(start), returns },
    previousRebalanceDate: cal.actual.at(-1)!,
    nextRebalanceDate: cal.scheduled.at(-1)!,
    todayDate: dates[todayDay],
    todayHoldings: selectOnDay(todayDay, rules, u),
  };
}
