// Calendar dates, one module for the pipeline and the sample generator. ISO dates (YYYY-MM-DD) are
// parsed without Date objects, and days are counted since 1970-01-01 ("epoch days"): every metric
// groups by them, so this is a hot path. Month arithmetic goes through date-fns.
import { addMonths } from "date-fns";

// Calendar parts of ISO dates.
export interface DateParts {
  /** Days since 1970-01-01. */
  day: Int32Array;
  year: Int32Array;
  month: Int32Array; // 1..12
}

const DAY_MS = 86_400_000;
const cache = new WeakMap<string[], DateParts>();

/** Days since 1970-01-01 of y-m-d (proleptic Gregorian). */
export function epochDay(y: number, m: number, d: number): number {
  const a = m <= 2 ? 1 : 0;
  const yy = y - a;
  const era = Math.floor(yy / 400);
  const yoe = yy - era * 400;
  const mp = (m + 9) % 12;
  const doy = Math.floor((153 * mp + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

export function isoFromEpochDay(z: number): string {
  const t = new Date(z * DAY_MS);
  return t.toISOString().slice(0, 10);
}

const digit = (s: string, i: number) => s.charCodeAt(i) - 48;

export function parseIso(s: string): [number, number, number] {
  return [
    digit(s, 0) * 1000 + digit(s, 1) * 100 + digit(s, 2) * 10 + digit(s, 3),
    digit(s, 5) * 10 + digit(s, 6),
    digit(s, 8) * 10 + digit(s, 9),
  ];
}

/** Days since 1970-01-01 of an ISO date. */
export const epochDayOfIso = (s: string): number => epochDay(...parseIso(s));

/** Weekday of an epoch day: 0 Sunday … 6 Saturday (1970-01-01 was a Thursday). */
export const weekday = (day: number): number => (((day + 4) % 7) + 7) % 7;

/** The epoch day of a month's last day (month 1..12). */
export const lastEpochDayOfMonth = (y: number, m: number): number => epochDay(...plusMonths(y, m, 1, 1)) - 1;

export function dateParts(dates: string[]): DateParts {
  let p = cache.get(dates);
  if (p) return p;
  const n = dates.length;
  p = { day: new Int32Array(n), year: new Int32Array(n), month: new Int32Array(n) };
  for (let i = 0; i < n; i++) {
    const [y, m, d] = parseIso(dates[i]);
    p.year[i] = y;
    p.month[i] = m;
    p.day[i] = epochDay(y, m, d);
  }
  cache.set(dates, p);
  return p;
}

/**
 * y-m-d plus `months` (negative: minus), the day clamped to the target month's end: 31 Jan + 1 is
 * 28 or 29 Feb (dateutil's relativedelta, date-fns's addMonths). The date is built at local noon,
 * so no time zone or daylight-saving change moves it to another day.
 */
export function plusMonths(y: number, m: number, d: number, months: number): [number, number, number] {
  const t = new Date(0);
  t.setFullYear(y, m - 1, d);
  t.setHours(12, 0, 0, 0);
  const r = addMonths(t, months);
  return [r.getFullYear(), r.getMonth() + 1, r.getDate()];
}

/** `date` minus `months` as an epoch day (the day clamped to the month's end). */
export const minusMonths = (y: number, m: number, d: number, months: number): number =>
  epochDay(...plusMonths(y, m, d, -months));

const pad = (n: number, width: number) => String(n).padStart(width, "0");

/** ISO `date` plus `months`, the day clamped to the target month's end. */
export function isoPlusMonths(date: string, months: number): string {
  const [y, m, d] = plusMonths(...parseIso(date), months);
  return `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}`;
}
