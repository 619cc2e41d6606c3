// The companies and ratings tables as typed rows: read by the computing stages (stages/frames.ts)
// and by the snapshot readers the API serves from.
import { type Company, RATING_NAMES, type RatingRow } from "../../types.ts";
import { type Conn, columns, columnsInSlices, type Params } from "../duck/duck.ts";
import { eachNumericChunk } from "../duck/typed-read.ts";

const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));

export async function loadCompanies(conn: Conn): Promise<Company[]> {
  // in slices: the API's reader loads them at open, while the old snapshot serves requests
  const [id, ticker, name, sector, sectorId, industry, industryId, shares, cap] = await columnsInSlices(
    conn,
    "select id, ticker, name, sector, sector_id, industry, industry_id, shares_outstanding, market_cap " +
      "from companies order by ticker",
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

/**
 * The ratings in (date, ticker) order. Dates and tickers cross as integer indexes and the ratings
 * as typed arrays, chunk by chunk: the generic reader turned 1.4 M rows (5,000 × 25 years) into
 * JS values in one synchronous 8 s stretch, long enough under load to cost a worker its job's lock.
 */
export async function loadRatings(conn: Conn, table = "ratings", params?: Params): Promise<RatingRow[]> {
  const [dates = []] = (await columns(
    conn,
    `select distinct strftime(date, '%Y-%m-%d') from ${table} order by 1`,
    params,
  )) as [string[]];
  const [tickers = []] = (await columns(conn, `select distinct ticker from ${table} order by 1`, params)) as [string[]];
  const out: RatingRow[] = [];
  await eachNumericChunk(
    conn,
    `with d as (select date, (row_number() over (order by date) - 1)::integer di
                from (select distinct date from ${table})),
          t as (select ticker, (row_number() over (order by ticker) - 1)::integer ti
                from (select distinct ticker from ${table}))
     select di, ti, ${RATING_NAMES.map((n) => `${n}::double`).join(", ")}
     from ${table} join d using (date) join t using (ticker) order by date, ticker`,
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
    params,
  );
  return out;
}
