// Calendar parts of ISO dates, parsed without Date objects (hot path: every metric groups by them).
export interface DateParts {
  /** Days since 1970-01-01. */
  day: Int32Array;
  year: Int32Array;
  month: Int32Array; // 1..12
}

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
  const t = new Date(z * 86_400_000);
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

/** `date` minus `months` (dateutil relativedelta: the day clamped to the month's end). */
export function minusMonths(y: number, m: number, d: number, months: number): number {
  const total = y * 12 + (m - 1) - months;
  const yy = Math.floor(total / 12);
  const mm = total - yy * 12 + 1;
  const last = new Date(Date.UTC(yy, mm, 0)).getUTCDate();
  return epochDay(yy, mm, Math.min(d, last));
}
