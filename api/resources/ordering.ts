// Ordering and filtering vocabulary shared by every transport: the contract's order_by keys,
// rating ranges, ticker/name search, and the one comparator (ties by ticker, then id; missing
// values last in both directions).
import { type Company, RATING_NAMES, type RatingName, type RatingValues } from "../../pipeline/types.ts";

export const ORDER_KEYS = ["ticker", "name", "market_cap", ...RATING_NAMES] as const;
export type OrderKey = (typeof ORDER_KEYS)[number];
export const ORDER_VALUES = [...ORDER_KEYS, ...ORDER_KEYS.map((k) => `-${k}` as const)] as const;
export type OrderBy = (typeof ORDER_VALUES)[number];
export const isOrderBy = (v: string): v is OrderBy => (ORDER_VALUES as readonly string[]).includes(v);

export type Ranges = Partial<Record<RatingName, [number, number]>>;

/** `{"return_rating":[8,10]}` or `{return_rating:[8,10]}`; bounds inclusive, 0 <= min <= max <= 10. */
export function parseRanges(text: string): Ranges | string {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    try {
      v = JSON.parse(text.replace(/([{,]\s*)([A-Za-z_][A-Za-z0-9_]*)\s*:/g, '$1"$2":'));
    } catch {
      return 'must be an object such as {"return_rating":[8,10]} or {return_rating:[8,10]}';
    }
  }
  return checkRanges(v);
}

/** Validates an already-parsed ranges object (GraphQL passes one as an input object). */
export function checkRanges(v: unknown): Ranges | string {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return "must be an object of rating names to [min, max]";
  const out: Ranges = {};
  for (const [k, b] of Object.entries(v)) {
    if (!(RATING_NAMES as readonly string[]).includes(k))
      return `unknown rating ${JSON.stringify(k)}; known: ${RATING_NAMES.join(", ")}`;
    if (b == null) continue; // a known rating left open (GraphQL sends null for an unset field)
    if (!Array.isArray(b) || b.length !== 2 || !b.every((x) => typeof x === "number" && Number.isFinite(x)))
      return `${k} must be a two-number array [min, max]`;
    const [lo, hi] = b as [number, number];
    if (!(lo >= 0 && lo <= hi && hi <= 10)) return `${k} bounds must satisfy 0 <= min <= max <= 10`;
    out[k as RatingName] = [lo, hi];
  }
  return out;
}

/** Anything sortable by the contract's order_by keys. */
export interface Sortable {
  company: Company;
  ratings: RatingValues | null;
}

const cmpStr = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
const nameKey = new WeakMap<Company, string>();
const lowerName = (c: Company) => {
  let k = nameKey.get(c);
  if (k === undefined) {
    k = c.name.toLowerCase();
    nameKey.set(c, k);
  }
  return k;
};
/** Ties: ticker, then id (ascending whatever the direction of the key). */
const tie = (a: Sortable, b: Sortable) =>
  cmpStr(a.company.ticker, b.company.ticker) || cmpStr(a.company.id, b.company.id);

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
  if (key === "ticker")
    return (a, b) => dir * cmpStr(a.company.ticker, b.company.ticker) || cmpStr(a.company.id, b.company.id);
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

/** Ids compared as numbers when both are integers (portfolio and benchmark lists). */
export const numericId = (a: string, b: string) => {
  const x = Number(a);
  const y = Number(b);
  if (Number.isFinite(x) && Number.isFinite(y) && x !== y) return x - y;
  return a < b ? -1 : a > b ? 1 : 0;
};

/** A page of a list; `totalCount` is the whole list's length. */
export interface Page<T> {
  items: T[];
  totalCount: () => Promise<number>;
}
export interface PageArgs {
  offset: number;
  limit: number;
}
export const pageOf = <T>(list: readonly T[], p: PageArgs): Page<T> => ({
  items: list.slice(p.offset, p.offset + p.limit),
  totalCount: async () => list.length,
});
