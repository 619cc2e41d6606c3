// Typed in-memory frames of the staged tables: what the computing stages work on.
import { computeRatings } from "../ratings/computed.ts";
import { columns, columnsInSlices, type Conn } from "../store/duck.ts";
import { eachNumericChunk } from "../store/typed-read.ts";
import { appendTable, exportParquet } from "../store/write.ts";
import type { StageContext } from "./context.ts";
import { RATING_NAMES, type Company, type LevelSeries, type PricePanel, type RatingRow } from "../types.ts";

export interface Frames {
  companies: Company[];
  panel: PricePanel;
  ratings: RatingRow[];
  /** Index level series from the `benchmarks` table, by series name. */
  indexSeries: Map<string, LevelSeries>;
}

const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

export async function loadCompanies(conn: Conn): Promise<Company[]> {
  // in slices: the API's reader loads them at open, while the old snapshot serves requests
  const [id, ticker, name, sector, sectorId, industry, industryId, shares, cap] = await columnsInSlices(
    conn,
    "select id, ticker, name, sector, sector_id, industry, industry_id, shares_outstanding, market_cap from companies order by ticker",
  );
  return ticker.map((t, i) => ({
    id: String(id[i]),
    ticker: String(t),
    name: String(name[i]),
    sector: String(sector[i]),
    sectorId: Number(sectorId[i]),
    industry: String(industry[i]),
    industryId: Number(industryId[i]),
    sharesOutstanding: num(shares[i]),
    marketCap: num(cap[i]),
  }));
}

/** Dates and tickers become integer indexes in SQL, so only numbers cross into JS per price. */
export async function loadPanel(conn: Conn, table = "prices"): Promise<PricePanel> {
  const [dates] = (await columns(conn, `select distinct strftime(date, '%Y-%m-%d') from ${table} order by 1`)) as [string[]];
  const [tickers] = (await columns(conn, `select distinct ticker from ${table} order by 1`)) as [string[]];
  const close = tickers.map(() => new Float64Array(dates.length).fill(NaN));
  await eachNumericChunk(
    conn,
    `with d as (select date, (row_number() over (order by date) - 1)::integer di from (select distinct date from ${table})),
          t as (select ticker, (row_number() over (order by ticker) - 1)::integer ti from (select distinct ticker from ${table}))
     select di, ti, coalesce(adj_close, "close")::double from ${table} join d using (date) join t using (ticker)`,
    3,
    (cols, n) => {
      const [di, ti, px] = cols as [Int32Array, Int32Array, Float64Array];
      for (let k = 0; k < n; k++) close[ti[k]][di[k]] = px[k];
    },
  );
  return { dates: dates ?? [], tickers: tickers ?? [], close };
}

/**
 * The ratings in (date, ticker) order. Dates and tickers cross as integer indexes and the ratings
 * as typed arrays, chunk by chunk: the generic reader turned 1.4 M rows (5,000 × 25 years) into
 * JS values in one synchronous 8 s stretch, long enough under load to cost a worker its job's lock.
 */
export async function loadRatings(conn: Conn, table = "ratings"): Promise<RatingRow[]> {
  const [dates = []] = (await columns(conn, `select distinct strftime(date, '%Y-%m-%d') from ${table} order by 1`)) as [string[]];
  const [tickers = []] = (await columns(conn, `select distinct ticker from ${table} order by 1`)) as [string[]];
  const out: RatingRow[] = [];
  await eachNumericChunk(
    conn,
    `with d as (select date, (row_number() over (order by date) - 1)::integer di from (select distinct date from ${table})),
          t as (select ticker, (row_number() over (order by ticker) - 1)::integer ti from (select distinct ticker from ${table}))
     select di, ti, ${RATING_NAMES.map((n) => `${n}::double`).join(", ")} from ${table} join d using (date) join t using (ticker) order by date, ticker`,
    2 + RATING_NAMES.length,
    (cols, n) => {
      const [di, ti] = cols as Int32Array[];
      for (let i = 0; i < n; i++) {
        const r = { date: dates[di[i]], ticker: tickers[ti[i]] } as RatingRow;
        // null reads as 0 here, as Number(null) did
        for (let k = 0; k < RATING_NAMES.length; k++) r[RATING_NAMES[k]] = cols[k + 2][i];
        out.push(r);
      }
    },
  );
  return out;
}

export async function loadIndexSeries(conn: Conn, table = "benchmarks"): Promise<Map<string, LevelSeries>> {
  const [names = [], dates = [], levels = []] = (await columns(conn, `select benchmark, strftime(date, '%Y-%m-%d'), "close" from ${table} order by benchmark, date`)) as [string[], string[], number[]];
  const out = new Map<string, LevelSeries>();
  let start = 0;
  for (let i = 1; i <= names.length; i++) {
    if (i === names.length || names[i] !== names[start]) {
      out.set(names[start], { dates: dates.slice(start, i), levels: Float64Array.from(levels.slice(start, i)) });
      start = i;
    }
  }
  return out;
}

/** The frames but the companies: what can be read before the company ids are assigned. */
export type MarketFrames = Omit<Frames, "companies">;

export async function loadMarketFrames(conn: Conn, has: { ratings: boolean; benchmarks: boolean }, indexSeries?: Frames["indexSeries"]): Promise<MarketFrames> {
  return {
    panel: await loadPanel(conn),
    ratings: has.ratings ? await loadRatings(conn) : [],
    indexSeries: indexSeries ?? (has.benchmarks ? await loadIndexSeries(conn) : new Map()),
  };
}

/** `market`: the rest, read earlier (loadMarketFrames). */
export async function loadFrames(conn: Conn, has: { ratings: boolean; benchmarks: boolean }, market?: MarketFrames): Promise<Frames> {
  const companies = await loadCompanies(conn);
  return { companies, ...(market ?? (await loadMarketFrames(conn, has))) };
}

/** A source without vendor ratings: ratings computed from prices, into `frames` and the staging folder. */
export async function computedRatingsStage(ctx: Pick<StageContext, "conn" | "out" | "log">, frames: Frames): Promise<void> {
  frames.ratings = computeRatings(frames.panel, frames.companies);
  await appendTable(ctx.conn, "ratings", [["date", "date"], ["ticker", "varchar"], ...RATING_NAMES.map((n): [string, "double"] => [n, "double"])], frames.ratings.map((r) => [r.date, r.ticker, ...RATING_NAMES.map((n) => r[n])]));
  await exportParquet(ctx.conn, "ratings", ctx.out, ["date"], "date, ticker");
  ctx.log.info({ rows: frames.ratings.length }, "no vendor ratings: computed from prices");
}
