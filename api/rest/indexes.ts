// Per-snapshot indexes, built lazily once and dropped with the snapshot (WeakMap): rating dates
// as-of lookup, per-date items pre-serialized, sorted orders per order_by, per-ticker rating history.
import type { Snapshot } from "../../pipeline/store/model.ts";
import type { Company, RatingRow, RatingValues } from "../../pipeline/types.ts";
import { RATING_NAMES, type RatingName } from "../../pipeline/types.ts";
import type { OrderBy, OrderKey, Ranges } from "./params.ts";
import { ratedStockItem } from "./resources.ts";

/** Anything sortable by the contract's order_by keys. */
export interface Sortable {
  company: Company;
  ratings: RatingValues | null;
}

export interface RatedEntry extends Sortable {
  ratings: RatingRow;
  value: ReturnType<typeof ratedStockItem>;
  json: string;
  /** upper-case "TICKER\u0000NAME" for search */
  haystack: string;
}

const cmpStr = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const nameKey = new WeakMap<Company, string>();
const lowerName = (c: Company) => {
  let k = nameKey.get(c);
  if (k === undefined) nameKey.set(c, (k = c.name.toLowerCase()));
  return k;
};
/** Ties: ticker, then id (ascending whatever the direction of the key). */
const tie = (a: Sortable, b: Sortable) => cmpStr(a.company.ticker, b.company.ticker) || cmpStr(a.company.id, b.company.id);

/** Comparator for an order_by value; missing values (null market cap, unrated stock) sort last. */
export function comparator(orderBy: OrderBy): (a: Sortable, b: Sortable) => number {
  const desc = orderBy.startsWith("-");
  const key = (desc ? orderBy.slice(1) : orderBy) as OrderKey;
  const dir = desc ? -1 : 1;
  const numeric = (get: (s: Sortable) => number | null | undefined) => (a: Sortable, b: Sortable) => {
    const x = get(a);
    const y = get(b);
    const xm = x == null || Number.isNaN(x);
    const ym = y == null || Number.isNaN(y);
    if (xm || ym) return xm && ym ? tie(a, b) : xm ? 1 : -1;
    return x < y ? -dir : x > y ? dir : tie(a, b);
  };
  if (key === "ticker") return (a, b) => dir * cmpStr(a.company.ticker, b.company.ticker) || cmpStr(a.company.id, b.company.id);
  if (key === "name") return (a, b) => dir * cmpStr(lowerName(a.company), lowerName(b.company)) || tie(a, b);
  if (key === "market_cap") return numeric((s) => s.company.marketCap);
  const r = key as RatingName;
  return numeric((s) => s.ratings?.[r]);
}

export function matchesSearch(c: Company, needleUpper: string): boolean {
  return c.ticker.toUpperCase().includes(needleUpper) || c.name.toUpperCase().includes(needleUpper);
}

export function inRanges(r: RatingValues | null, ranges: Ranges): boolean {
  for (const n of RATING_NAMES) {
    const b = ranges[n];
    if (!b) continue;
    const v = r?.[n];
    if (v == null || !(v >= b[0] && v <= b[1])) return false;
  }
  return true;
}

export class SnapshotIndex {
  private entries = new Map<string, RatedEntry[]>();
  private orders = new Map<string, RatedEntry[]>();
  private history: Map<string, RatingRow[]> | null = null;
  constructor(readonly s: Snapshot) {}

  /** Index in ratingDates of the latest date on or before `date` (latest when omitted); -1 before the first. */
  ratingDateIndex(date?: string): number {
    const d = this.s.ratingDates;
    if (date === undefined) return d.length - 1;
    let lo = 0;
    let hi = d.length - 1;
    let ans = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (d[mid] <= date) (ans = mid), (lo = mid + 1);
      else hi = mid - 1;
    }
    return ans;
  }

  /** The rating items of one rating date, in ticker order, each serialized once. */
  entriesOf(date: string): RatedEntry[] {
    let e = this.entries.get(date);
    if (!e) {
      e = [];
      for (const row of this.s.ratingsByDate.get(date) ?? []) {
        const company = this.s.companyByTicker.get(row.ticker.toUpperCase());
        if (!company) continue;
        const value = ratedStockItem(row.date, company, row);
        e.push({ company, ratings: row, value, json: JSON.stringify(value), haystack: `${company.ticker}\u0000${company.name}`.toUpperCase() });
      }
      e.sort(comparator("ticker"));
      this.entries.set(date, e);
    }
    return e;
  }

  /** The items of one rating date sorted by `orderBy` (cached per date and order). */
  sorted(date: string, orderBy: OrderBy): RatedEntry[] {
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
          if (!l) h.set(t, (l = []));
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
    let lo = 0;
    let hi = h.length - 1;
    let ans: RatingRow | undefined;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (h[mid].date <= date) (ans = h[mid]), (lo = mid + 1);
      else hi = mid - 1;
    }
    return ans;
  }
}

const indexes = new WeakMap<Snapshot, SnapshotIndex>();
export function indexOf(s: Snapshot): SnapshotIndex {
  let i = indexes.get(s);
  if (!i) indexes.set(s, (i = new SnapshotIndex(s)));
  return i;
}
