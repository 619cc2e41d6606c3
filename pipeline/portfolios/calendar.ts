// Rebalance calendar (contract §5): day k is the first date's calendar day plus k × frequency
// months — always counted from the first date, so 31 Jan gives 29 Feb then 31 Mar, not 29 Mar —
// clamped to the month's end, then moved forward to the first trading date on or after it.
import { tradingIndexOnOrAfter } from "./universe.ts";

/** `date` + `months`, the day clamped to the target month's length. */
export function addMonthsClamped(date: string, months: number): string {
  const y = Number(date.slice(0, 4));
  const m = Number(date.slice(5, 7)) - 1 + months;
  const d = Number(date.slice(8, 10));
  const year = y + Math.floor(m / 12);
  const month = ((m % 12) + 12) % 12;
  const last = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  const dd = Math.min(d, last);
  return `${String(year).padStart(4, "0")}-${String(month + 1).padStart(2, "0")}-${String(dd).padStart(2, "0")}`;
}

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
