// Typed in-memory frames of the staged tables: what the computing stages work on.
import { randomBytes } from "node:crypto";
import { type Conn, columns } from "../store/duck/duck.ts";
import { eachNumericChunk } from "../store/duck/typed-read.ts";
import { loadCompanies, loadRatings } from "../store/read/frame-reads.ts";
import type { Company, LevelSeries, PricePanel, RatingRow } from "../types.ts";
import type { StageContext } from "./context.ts";
import { modelRatingsStage } from "./model-ratings.ts";

// Read by the API's snapshot readers too, so they live in the store.
export { loadCompanies, loadRatings };

export interface Frames {
  companies: Company[];
  panel: PricePanel;
  ratings: RatingRow[];
  /** Index level series from the `benchmarks` table, by series name. */
  indexSeries: Map<string, LevelSeries>;
}

/**
 * The close (adjusted where given) of every ticker on every date. Only numbers cross into JS per
 * price: a date as its epoch day, a ticker as its index. `keyOrdered`: the table's storage order is
 * (ticker, date) ascending, checked when it was staged (sources/load-table.ts); each ticker's rows
 * are then one run, read off the per-ticker counts. Otherwise the ticker's index comes from an
 * ENUM of the sorted tickers. At 5,000 × 25 (32 M prices, one DuckDB thread) 3.2 s and 4.5 s,
 * against 7.4 s for the joins against numbered dates and tickers this replaced.
 */
export async function loadPanel(
  conn: Conn,
  table = "prices",
  opts: { keyOrdered?: boolean } = {},
): Promise<PricePanel> {
  const [dates = [], days = []] = (await columns(
    conn,
    `select strftime(d, '%Y-%m-%d'), (d - DATE '1970-01-01')::integer from (select distinct date ` +
      `as d from ${table}) order by d`,
  )) as [string[], number[]];
  const first = days[0] ?? 0;
  const dateIndex = new Int32Array(days.length ? days[days.length - 1] - first + 1 : 0);
  days.forEach((d, i) => {
    dateIndex[d - first] = i;
  });
  const priced = `(date - DATE '1970-01-01')::integer, coalesce(adj_close, "close")::double`;
  if (opts.keyOrdered) {
    const [tickers = [], counts = []] = (await columns(
      conn,
      `select ticker, count(*)::integer from ${table} group by ticker order by ticker`,
    )) as [string[], number[]];
    const close = tickers.map(() => new Float64Array(dates.length).fill(NaN));
    let ti = -1;
    let left = 0;
    await eachNumericChunk(conn, `select ${priced} from ${table}`, 2, (cols, n) => {
      const [day, px] = cols as [Int32Array, Float64Array];
      for (let k = 0; k < n; k++) {
        while (left === 0) left = counts[++ti];
        close[ti][dateIndex[day[k] - first]] = px[k];
        left--;
      }
    });
    return { dates, tickers, close };
  }
  // A type of this connection's database, named for this read alone (at random: no count kept in the
  // process, and reads on a database shared by processes or threads never meet) and dropped after it.
  const type = `panel_tickers_${randomBytes(8).toString("hex")}`;
  await conn.run(
    `create type ${type} as enum (select distinct ticker from ${table} where ticker is not null order by 1)`,
  );
  try {
    const [tickers = []] = (await columns(conn, `select unnest(enum_range(null::${type}))`)) as [string[]];
    const close = tickers.map(() => new Float64Array(dates.length).fill(NaN));
    await eachNumericChunk(
      conn,
      `select enum_code(ticker::${type})::integer, ${priced} from ${table}`,
      3,
      (cols, n) => {
        const [ti, day, px] = cols as [Int32Array, Int32Array, Float64Array];
        for (let k = 0; k < n; k++) close[ti[k]][dateIndex[day[k] - first]] = px[k];
      },
    );
    return { dates, tickers, close };
  } finally {
    await conn.run(`drop type ${type}`);
  }
}

export async function loadIndexSeries(conn: Conn, table = "benchmarks"): Promise<Map<string, LevelSeries>> {
  const [names = [], dates = [], levels = []] = (await columns(
    conn,
    `select benchmark, strftime(date, '%Y-%m-%d'), "close" from ${table} order by benchmark, date`,
  )) as [string[], string[], number[]];
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

/** `keyOrdered`: the staged prices are in (ticker, date) order (see loadPanel). */
export async function loadMarketFrames(
  conn: Conn,
  has: { ratings: boolean; benchmarks: boolean; keyOrdered?: boolean },
  indexSeries?: Frames["indexSeries"],
): Promise<MarketFrames> {
  return {
    panel: await loadPanel(conn, "prices", { keyOrdered: has.keyOrdered }),
    ratings: has.ratings ? await loadRatings(conn) : [],
    indexSeries: indexSeries ?? (has.benchmarks ? await loadIndexSeries(conn) : new Map()),
  };
}

/** `market`: the rest, read earlier (loadMarketFrames). */
export async function loadFrames(
  conn: Conn,
  has: { ratings: boolean; benchmarks: boolean },
  market?: MarketFrames,
): Promise<Frames> {
  const companies = await loadCompanies(conn);
  return { companies, ...(market ?? (await loadMarketFrames(conn, has))) };
}

/** A source without vendor ratings: the factor model's (model-ratings.ts), over the source's fundamentals. */
export async function computedRatingsStage(
  ctx: Pick<StageContext, "conn" | "out" | "log">,
  frames: Frames,
  sourceDir?: string,
): Promise<void> {
  await modelRatingsStage(ctx, frames, sourceDir);
}
