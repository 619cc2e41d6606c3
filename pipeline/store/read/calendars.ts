// One string array per distinct calendar: the series a reader hands out share their dates.
// Stocks of one market mostly trade on the same days, so thousands of cached return series need
// a handful of date arrays instead of one 6,300-string array each (at 25 years of days), and the
// calendar parts the analytics derive per dates array (`dateParts`, cached by identity) are
// computed once per calendar, not once per stock.
import { isoFromEpochDay } from "../../shared/dates.ts";

export class Calendars {
  /** Candidates by length, first and last day; a full comparison only where those agree. */
  private readonly byShape = new Map<string, { days: Int32Array; dates: string[] }[]>();
  private readonly iso = new Map<number, string>();
  private size = 0;

  /** `maxDays`: days kept across calendars; beyond it, new calendars are not shared (still correct). */
  constructor(private readonly maxDays = 2_000_000) {}

  /** ISO dates of `days` (days since 1970-01-01), the same array for the same days. */
  datesOf(days: Int32Array): string[] {
    const n = days.length;
    if (n === 0) return [];
    const key = `${n}:${days[0]}:${days[n - 1]}`;
    const list = this.byShape.get(key);
    const hit = list?.find((c) => sameDays(c.days, days));
    if (hit) return hit.dates;
    const dates = Array.from(days, (d) => this.text(d));
    if (this.size + n <= this.maxDays) {
      if (list) list.push({ days: days.slice(), dates });
      else this.byShape.set(key, [{ days: days.slice(), dates }]);
      this.size += n;
    }
    return dates;
  }

  private text(d: number): string {
    let s = this.iso.get(d);
    if (s === undefined) {
      s = isoFromEpochDay(d);
      this.iso.set(d, s);
    }
    return s;
  }
}

function sameDays(a: Int32Array, b: Int32Array): boolean {
  for (let i = a.length - 1; i >= 0; i--) if (a[i] !== b[i]) return false;
  return true;
}
