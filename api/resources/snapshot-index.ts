// Per-snapshot lazy indexes over the in-memory Snapshot (WeakMap: dropped with the snapshot):
// rating dates as-of lookup, per-date rated stocks, sorted orders per order_by, per-ticker
// rating history. memory-source.ts uses this; reader-source.ts shares the as-of date search.

import { lowerBound } from "../../pipeline/shared/lower-bound.ts";
import type { Snapshot } from "../../pipeline/store/snapshot/model.ts";
import type { Company, RatingRow } from "../../pipeline/types.ts";
import { comparator, type OrderBy } from "./ordering.ts";
import type { RatedStock } from "./snapshot-source.ts";

/** Upper-case "TICKER\u0000NAME" per company, for search. */
const haystacks = new WeakMap<Company, string>();
export function haystackOf(c: Company): string {
  let h = haystacks.get(c);
  if (h === undefined) {
    h = `${c.ticker}\u0000${c.name}`.toUpperCase();
    haystacks.set(c, h);
  }
  return h;
}

/** Index of the latest element <= key in an ascending array; -1 before the first. */
export const lastAtOrBefore = (xs: readonly string[], key: string): number => lowerBound(xs, key, true) - 1;

/** A ticker's rating rows ascending by date, with their dates beside them for the as-of search. */
interface History {
  rows: RatingRow[];
  dates: string[];
}
const NO_HISTORY: History = { rows: [], dates: [] };

export class SnapshotIndex {
  private entries = new Map<string, RatedStock[]>();
  private orders = new Map<string, RatedStock[]>();
  private history: Map<string, History> | null = null;
  constructor(readonly s: Snapshot) {}

  /** The latest rating date on or before `date` (latest when omitted); null before the first. */
  ratingDateOnOrBefore(date?: string): string | null {
    const d = this.s.ratingDates;
    const i = date === undefined ? d.length - 1 : lastAtOrBefore(d, date);
    return i < 0 ? null : d[i];
  }

  /** The rated stocks of one rating date, in ticker order. */
  entriesOf(date: string): RatedStock[] {
    let e = this.entries.get(date);
    if (!e) {
      e = [];
      for (const row of this.s.ratingsByDate.get(date) ?? []) {
        const company = this.s.companyByTicker.get(row.ticker.toUpperCase());
        if (company) e.push({ company, ratings: row });
      }
      e.sort(comparator("ticker"));
      this.entries.set(date, e);
    }
    return e;
  }

  /** The rated stocks of one rating date sorted by `orderBy` (cached per date and order). */
  sorted(date: string, orderBy: OrderBy): RatedStock[] {
    const k = `${date}|${orderBy}`;
    let o = this.orders.get(k);
    if (!o) {
      o = orderBy === "ticker" ? this.entriesOf(date) : [...this.entriesOf(date)].sort(comparator(orderBy));
      this.orders.set(k, o);
    }
    return o;
  }

  /** A ticker's rating rows, ascending by date. */
  historyOf(ticker: string): RatingRow[] {
    return this.histories().get(ticker)?.rows ?? [];
  }

  /** A ticker's latest rating on or before `date` (latest overall when omitted). */
  ratingAsOf(ticker: string, date?: string): RatingRow | undefined {
    const h = this.histories().get(ticker) ?? NO_HISTORY;
    if (date === undefined) return h.rows[h.rows.length - 1];
    const i = lastAtOrBefore(h.dates, date);
    return i < 0 ? undefined : h.rows[i];
  }

  private histories(): Map<string, History> {
    if (!this.history) {
      const h = new Map<string, History>();
      for (const d of this.s.ratingDates)
        for (const row of this.s.ratingsByDate.get(d) ?? []) {
          const t = row.ticker.toUpperCase();
          let l = h.get(t);
          if (!l) {
            l = { rows: [], dates: [] };
            h.set(t, l);
          }
          l.rows.push(row);
          l.dates.push(row.date);
        }
      this.history = h;
    }
    return this.history;
  }
}

const indexes = new WeakMap<Snapshot, SnapshotIndex>();
export function indexOf(s: Snapshot): SnapshotIndex {
  let i = indexes.get(s);
  if (!i) {
    i = new SnapshotIndex(s);
    indexes.set(s, i);
  }
  return i;
}
