// The trading calendar of the sample: weekdays of a fixed date range minus a few fixed US market
// holidays. Nothing depends on today's date.

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

const DAY_MS = 86_400_000;

export function isoFromDay(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

export function dayFromIso(iso: string): number {
  return Math.round(Date.parse(`${iso}T00:00:00Z`) / DAY_MS);
}

export function dayOf(year: number, month: number, dayOfMonth: number): number {
  return Math.round(Date.UTC(year, month - 1, dayOfMonth) / DAY_MS);
}

/** Last calendar day of a month (month 1..12). */
export function endOfMonthDay(year: number, month: number): number {
  return dayOf(year, month + 1, 1) - 1;
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
    const day = dayOf(year, m, d);
    const wd = (day + 4) % 7;
    set.add(wd === 6 ? day - 1 : wd === 0 ? day + 1 : day);
  }
  const nov1 = new Date(Date.UTC(year, 10, 1)).getUTCDay(); // 0 = Sunday
  const firstThursday = 1 + ((4 - nov1 + 7) % 7);
  set.add(dayOf(year, 11, firstThursday + 21));
  return set;
}

export function buildCalendar(startYear: number, endYear: number = END_YEAR): Calendar {
  const dates: string[] = [];
  const days: number[] = [];
  const monthStarts: number[] = [];
  let lastMonth = -1;
  for (let y = startYear; y <= endYear; y++) {
    const hol = holidays(y);
    for (let d = dayOf(y, 1, 1); d <= dayOf(y, 12, 31); d++) {
      const wd = (d + 4) % 7; // 1970-01-01 was a Thursday (4)
      if (wd === 0 || wd === 6 || hol.has(d)) continue;
      const iso = isoFromDay(d);
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
export function indexOnOrBefore(cal: Calendar, day: number): number {
  let lo = 0;
  let hi = cal.dayNumbers.length - 1;
  let ans = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (cal.dayNumbers[mid] <= day) {
      ans = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return ans;
}
