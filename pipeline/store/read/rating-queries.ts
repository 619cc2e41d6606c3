// SQL over a snapshot's `ratings` and `companies` views for the lazy reader: one rating date's
// rated stocks filtered, ordered and paged in DuckDB (same order as the API's comparator: missing
// values last in both directions, ties by ticker then id), each ticker's latest rating, ratings
// as of a date and one ticker's history. Only the requested rows cross into JS.
import { RATING_NAMES, type RatingName, type RatingRow } from "../../types.ts";
import { Binds, type Conn, columns, columnsInSlices } from "../duck/duck.ts";

export type RatedOrderKey = "ticker" | "name" | "market_cap" | RatingName;
export interface RatedQuery {
  date: string;
  key: RatedOrderKey;
  descending: boolean;
  /** upper-case needle matched against ticker and name */
  search?: string;
  ranges?: Partial<Record<RatingName, [number, number]>>;
}

const RATING_COLS = RATING_NAMES.map((n) => `r.${n}`).join(", ");
/** A number column with NaN read as missing (the comparator treats both alike). */
const numeric = (col: string) => `(case when isnan(cast(${col} as double)) then null else ${col} end)`;
/** `ratings`: the ratings relation (the whole table, or one date's rows already set apart). */
const join = (ratings = "ratings") => `${ratings} r join companies c on upper(r.ticker) = upper(c.ticker)`;

/** The query's filter, its values bound in `b`. */
function where(q: RatedQuery, b: Binds): string {
  const parts = [`r.date = ${b.v(q.date)}::date`];
  if (q.search) {
    const s = b.v(q.search);
    parts.push(`(strpos(upper(c.ticker), ${s}) > 0 or strpos(upper(c.name), ${s}) > 0)`);
  }
  for (const n of RATING_NAMES) {
    const r = q.ranges?.[n];
    if (r) parts.push(`(r.${n} >= ${b.v(Number(r[0]))} and r.${n} <= ${b.v(Number(r[1]))})`);
  }
  return parts.join(" and ");
}

function orderBy(q: RatedQuery): string {
  const dir = q.descending ? "desc" : "asc";
  if (q.key === "ticker") return `c.ticker ${dir}, c.id`;
  if (q.key === "name") return `lower(c.name) ${dir}, c.ticker, c.id`;
  const col = q.key === "market_cap" ? "c.market_cap" : `r.${q.key}`;
  return `${numeric(col)} ${dir} nulls last, c.ticker, c.id`;
}

function ratingRows(cols: unknown[][], offset = 0): RatingRow[] {
  const [dates = [], tickers = []] = cols as string[][];
  return dates.map((d, i) => {
    const r = { date: d, ticker: tickers[i] } as RatingRow;
    RATING_NAMES.forEach((n, k) => {
      r[n] = Number((cols[k + 2 + offset] as number[])[i]);
    });
    return r;
  });
}
const SELECT_ROW = `strftime(r.date, '%Y-%m-%d'), r.ticker, ${RATING_COLS}`;

/** One page of a date's rated stocks: their rating rows and the upper-case company ticker of each. */
export async function ratedPage(
  conn: Conn,
  q: RatedQuery,
  offset: number,
  limit: number,
  ratings?: string,
): Promise<{ rows: RatingRow[]; companyTickers: string[] }> {
  const b = new Binds();
  const cols = await columns(
    conn,
    `select ${SELECT_ROW}, upper(c.ticker) from ${join(ratings)} where ${where(q, b)} order by ${orderBy(q)} ` +
      `limit ${b.v(Math.max(0, Math.floor(limit)))} offset ${b.v(Math.max(0, Math.floor(offset)))}`,
    b.params,
  );
  return { rows: ratingRows(cols), companyTickers: (cols[2 + RATING_NAMES.length] ?? []) as string[] };
}

export async function ratedCount(conn: Conn, q: RatedQuery, ratings?: string): Promise<number> {
  const b = new Binds();
  const [[n] = []] = await columns(
    conn,
    `select count(*)::integer from ${join(ratings)} where ${where(q, b)}`,
    b.params,
  );
  return Number(n ?? 0);
}

/**
 * Each ticker's latest row of `relation` (its columns), `where` filtering the rows considered: each
 * ticker's last date by a hash aggregate, then only those rows (a window over every rating row
 * sorted the whole table: 4 s of both cores at 5,000 × 25, while requests wait for CPU).
 */
export const latestRatingsSql = (
  relation: string,
  where = "",
) => `with last as (select upper(ticker) k, max(date) d from ${relation} ${where} group by 1)
     select r.* from ${relation} r join last on upper(r.ticker) = last.k and r.date = last.d
     qualify row_number() over (partition by upper(r.ticker) order by r.date desc) = 1`;

/**
 * Each ticker's latest rating on or before `date` (every ticker's latest when no date), keyed by
 * upper-case ticker. From the `ratings` view, or `file`: a snapshot's precomputed latest rows
 * (reader-index.ts), which give the same answer without a date.
 */
export async function latestRatings(
  conn: Conn,
  date?: string,
  upperTickers?: readonly string[],
  file?: string,
): Promise<Map<string, RatingRow>> {
  const b = new Binds();
  const cond = [
    date === undefined ? "" : `date <= ${b.v(date)}::date`,
    upperTickers ? `upper(ticker) in (${b.each(upperTickers)})` : "",
  ].filter(Boolean);
  const where = cond.length ? `where ${cond.join(" and ")}` : "";
  const relation = file === undefined ? "ratings" : `read_parquet(${b.v(file)})`;
  // in slices: thousands of rows (the reader's open, an as-of page of many tickers) while requests are served
  const cols = await columnsInSlices(
    conn,
    `select ${SELECT_ROW}, upper(r.ticker) from (${latestRatingsSql(relation, where)}) r`,
    b.params,
  );
  const rows = ratingRows(cols);
  const keys = (cols[2 + RATING_NAMES.length] ?? []) as string[];
  return new Map(rows.map((r, i) => [keys[i], r]));
}

/**
 * Several tickers' rating rows (upper-case keys, matched case-insensitively), each ascending by
 * date: one scan of the ratings for all of them. The table is stored by date, so any one ticker's
 * history reads every row group; asking for many at once costs about what one costs.
 */
export async function ratingHistories(conn: Conn, upperTickers: readonly string[]): Promise<Map<string, RatingRow[]>> {
  const out = new Map<string, RatingRow[]>(upperTickers.map((t) => [t, []]));
  if (!upperTickers.length) return out;
  const b = new Binds();
  const cols = await columns(
    conn,
    `select ${SELECT_ROW}, upper(r.ticker) from ratings r where upper(r.ticker) in (${b.each(upperTickers)}) ` +
      `order by upper(r.ticker), r.date`,
    b.params,
  );
  const keys = (cols[2 + RATING_NAMES.length] ?? []) as string[];
  ratingRows(cols).forEach((r, i) => {
    out.get(keys[i])?.push(r);
  });
  return out;
}
