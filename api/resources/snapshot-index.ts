// Per-snapshot lazy indexes over the in-memory Snapshot (WeakMap: dropped with the snapshot):
// rating dates as-of lookup, per-date rated stocks, sorted orders per order_by, per-ticker
// rating history. Only memory-source.ts uses this.
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
export function asOf<T>(list: readonly T[], key: string, get: (t: T) => string): number {
  let lo = 0;
  let hi = list.length - 1;
  let ans = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (get(list[mid]) <= key) {
      ans = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return ans;
}

export class SnapshotIndex {
  private entries = new Map<string, RatedStock[]>();
  private orders = new Map<string, RatedStock[]>();
  private history: Map<string, RatingRow[]> | null = null;
  constructor(readonly s: Snapshot) {}

  /** The latest rating date on or before `date` (latest when omitted); null before the first. */
  ratingDateOnOrBefore(date?: string): string | null {
    const d = this.s.ratingDates;
    const i = date === undefined ? d.length - 1 : asOf(d, date, (x) => x);
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
    if (!this.history) {
      const h = new Map<string, RatingRow[]>();
      for (const d of this.s.ratingDates)
        for (const row of this.s.ratingsByDate.get(d) ?? []) {
          const t = row.ticker.toUpperCase();
          let l = h.get(t);
          if (!l) {
            l = [];
            h.set(t, l);
          }
          l.push(row);
        }
      this.history = h;
    }
    return this.history.get(ticker) ?? [];
  }

  /** A ticker's latest rating on or before `date` (latest overall when omitted). */
  ratingAsOf(ticker: string, date?: string): RatingRow | undefined {
    const h = this.historyOf(ticker);
    if (date === undefined) return h[h.length - 1];
    const i = asOf(h, date, (r) => r.date);
    return i < 0 ? undefined : h[i];
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
