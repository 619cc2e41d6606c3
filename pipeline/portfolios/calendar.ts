// Rebalance calendar (contract §5): day k is the first date's calendar day plus k × frequency
// months — always counted from the first date, so 31 Jan gives 29 Feb then 31 Mar, not 29 Mar —
// clamped to the month's end, then moved forward to the first trading date on or after it.
import { isoPlusMonths } from "../shared/dates.ts";
import { tradingIndexOnOrAfter } from "./universe.ts";

/** `date` + `months`, the day clamped to the target month's length. */
export const addMonthsClamped = isoPlusMonths;

export interface RebalanceCalendar {
  /** Calendar days k = 0, 1, … up to and including the first one after the last trading date. */
  scheduled: string[];
  /** scheduled[k] moved to a trading date; only for the days that have one. */
  actual: string[];
}

export function rebalanceCalendar(
  firstDate: string,
  frequencyMonths: number,
  tradingDates: string[],
): RebalanceCalendar {
  const scheduled: string[] = [];
  const actual: string[] = [];
  // A frequency that is not a whole positive number of months has no calendar (no rebalances).
  if (!Number.isInteger(frequencyMonths) || frequencyMonths <= 0 || tradingDates.length === 0)
    return { scheduled, actual };
  for (let k = 0; ; k++) {
    const day = addMonthsClamped(firstDate, k * frequencyMonths);
    scheduled.push(day);
    const i = tradingIndexOnOrAfter(tradingDates, day);
    if (i >= tradingDates.length) break; // the first calendar day past the data: the next rebalance
    actual.push(tradingDates[i]);
  }
  return { scheduled, actual };
}
