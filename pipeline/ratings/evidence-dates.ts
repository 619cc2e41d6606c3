// The dates the evidence reads at each rating date D: the forward date D_h of each horizon (the
// first trading date on or after D plus h calendar months, date-fns addMonths: 31 Jan + 1 month is
// the end of February), and the two dates of the 12-1 momentum baseline (21 and 252 trading dates
// before D, on the source's calendar). A date the calendar does not reach is null.
import { addMonths } from "date-fns";
import { lowerBound } from "../shared/lower-bound.ts";
import { HORIZONS, type Horizon } from "./evidence.ts";

/** Trading dates back from D to the momentum baseline's two closes (Jegadeesh-Titman 12-1: skip the last month). */
export const MOMENTUM_SKIP = 21;
export const MOMENTUM_LOOKBACK = 252;

export interface EvaluationDates {
  date: string;
  forward: Record<Horizon, string | null>;
  /** The closes of the momentum baseline: close(skip) / close(lookback) − 1. */
  skip: string | null;
  lookback: string | null;
}

const pad = (n: number, w: number) => String(n).padStart(w, "0");

/** ISO `date` plus `months` calendar months (date-fns, on the date's own calendar day). */
export function plusCalendarMonths(date: string, months: number): string {
  const [y, m, d] = date.split("-").map(Number);
  const t = addMonths(new Date(y, m - 1, d), months);
  return `${pad(t.getFullYear(), 4)}-${pad(t.getMonth() + 1, 2)}-${pad(t.getDate(), 2)}`;
}

/** The evaluation dates of each rating date, on the ascending trading calendar `calendar`. */
export function evaluationDates(ratingDates: readonly string[], calendar: readonly string[]): EvaluationDates[] {
  return ratingDates.map((date) => {
    const forward = {} as Record<Horizon, string | null>;
    for (const h of HORIZONS) {
      const i = lowerBound(calendar, plusCalendarMonths(date, h));
      forward[h] = i < calendar.length ? calendar[i] : null;
    }
    const at = lowerBound(calendar, date);
    const on = at < calendar.length && calendar[at] === date;
    const back = (k: number) => (on && at - k >= 0 ? calendar[at - k] : null);
    return { date, forward, skip: back(MOMENTUM_SKIP), lookback: back(MOMENTUM_LOOKBACK) };
  });
}
