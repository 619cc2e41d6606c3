// The trading calendar of the sample: weekdays of a fixed date range minus a few fixed US market
// holidays. Nothing depends on today's date.
import { epochDay, isoFromEpochDay, weekday } from "../../pipeline/shared/dates.ts";
import { lowerBound } from "../../pipeline/shared/lower-bound.ts";

/** The sample always ends here; `years` counts back from it. */
export const END_YEAR = 2025;

export interface Calendar {
  /** Ascending ISO dates (YYYY-MM-DD). */
  dates: string[];
  /** Index of the first trading date of every month, ascending. */
  monthStarts: number[];
  /** Calendar day number (days since 1970-01-01) of every date, for fast date arithmetic. */
  dayNumbers: Int32Array;
}

/**
 * Fixed holidays: New Year's Day, Independence Day, Christmas (as observed), and Thanksgiving (4th Thursday of
 * November).
 */
function holidays(year: number): Set<number> {
  const set = new Set<number>();
  for (const [m, d] of [
    [1, 1],
    [7, 4],
    [12, 25],
  ]) {
    // Observed on the Friday before a Saturday and the Monday after a Sunday.
    const day = epochDay(year, m, d);
    const wd = weekday(day);
    set.add(wd === 6 ? day - 1 : wd === 0 ? day + 1 : day);
  }
  const nov1 = weekday(epochDay(year, 11, 1));
  const firstThursday = 1 + ((4 - nov1 + 7) % 7);
  set.add(epochDay(year, 11, firstThursday + 21));
  return set;
}

export function buildCalendar(startYear: number, endYear: number = END_YEAR): Calendar {
  const dates: string[] = [];
  const days: number[] = [];
  const monthStarts: number[] = [];
  let lastMonth = -1;
  for (let y = startYear; y <= endYear; y++) {
    const hol = holidays(y);
    for (let d = epochDay(y, 1, 1); d <= epochDay(y, 12, 31); d++) {
      const wd = weekday(d);
      if (wd === 0 || wd === 6 || hol.has(d)) continue;
      const iso = isoFromEpochDay(d);
      const month = y * 12 + Number(iso.slice(5, 7));
      if (month !== lastMonth) {
        monthStarts.push(dates.length);
        lastMonth = month;
      }
      dates.push(iso);
      days.push(d);
    }
  }
  return { dates, monthStarts, dayNumbers: Int32Array.from(days) };
}

/** Index of the last trading date on or before `day`, or -1. */
export const indexOnOrBefore = (cal: Calendar, day: number): number => lowerBound(cal.dayNumbers, day, true) - 1;
