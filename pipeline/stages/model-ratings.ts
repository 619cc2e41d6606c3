// A source without vendor ratings: the factor model's ratings (pipeline/ratings/model.ts) into the
// frames and the staging folder, and each stock's components per rating date as `rating_components/`
// (one row per stock and date: the statement the statement factors came from, how many factors had
// an input, and every factor's raw value and 0..10 score), one file per year of rating dates. Only
// the ratings stay in the heap, as the price proxies' did.
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { FACTORS } from "../ratings/factors.ts";
import { type DateComponents, factorModel } from "../ratings/model.ts";
import { readModelStatements } from "../ratings/statements.ts";
import { type ChunkKind, type ColumnAppender, columnAppender, type JsColumn } from "../store/duck/chunks.ts";
import { exportParquetFile, KEYED_ROW_GROUP } from "../store/duck/write.ts";
import { type Company, type PricePanel, RATING_NAMES, type RatingRow } from "../types.ts";
import type { StageContext } from "./context.ts";

export const RATING_COMPONENTS = "rating_components";

/**
 * The components table's columns: the keys, the statement, how many factors had an input, and
 * `values`: every factor's raw value then every factor's score (FACTORS order, NaN: no input) as
 * little-endian float64s, one blob per row. One cell per row instead of 42 keeps the write to a few
 * seconds at 5,000 × 25 (pipeline/ratings/components.ts decodes it).
 */
export const COMPONENT_COLUMNS: [string, ChunkKind][] = [
  ["date", "varchar"],
  ["ticker", "varchar"],
  ["fiscal_year", "integer"],
  ["publish_date", "varchar"],
  ["factors", "integer"],
  ["values", "blob"],
];

/** One date's components as the table's columns. */
function componentColumns(date: string, c: DateComponents): JsColumn[] {
  const n = c.tickers.length;
  const f = FACTORS.length;
  const all = new Float64Array(n * 2 * f);
  for (let j = 0; j < f; j++)
    for (let k = 0; k < n; k++) {
      all[k * 2 * f + j] = c.raw[j][k];
      all[k * 2 * f + f + j] = c.score[j][k];
    }
  const bytes = new Uint8Array(all.buffer);
  const rowBytes = 2 * f * 8;
  return [
    new Array<string>(n).fill(date),
    c.tickers,
    Float64Array.from(c.fiscalYear, (y) => (y === 0 ? NaN : y)),
    c.publishDate,
    c.factors,
    Array.from({ length: n }, (_, k) => bytes.subarray(k * rowBytes, (k + 1) * rowBytes)),
  ];
}

/** The ratings as RATING_NAMES' columns (each property read by name, not by a variable key). */
function ratingColumns(ratings: RatingRow[]): Float64Array[] {
  const cols = RATING_NAMES.map(() => new Float64Array(ratings.length));
  const [total, ret, growth, risk, valuation, technical, macro] = cols;
  ratings.forEach((r, i) => {
    total[i] = r.total_rating;
    ret[i] = r.return_rating;
    growth[i] = r.growth_rating;
    risk[i] = r.risk_rating;
    valuation[i] = r.valuation_rating;
    technical[i] = r.technical_rating;
    macro[i] = r.macro_rating;
  });
  return cols;
}

/**
 * The components written a year of rating dates at a time, as `rating_components/<year>.parquet`: the
 * heap and DuckDB hold one year's rows, never every date's. Rows come in (date, ticker) order and stay
 * so (no sort): a read of one stock on one date opens its year's file and decodes the date's row groups.
 */
function componentParts(ctx: Pick<StageContext, "conn" | "out">) {
  let year: string | null = null;
  let appender: ColumnAppender | null = null;
  const table = `${RATING_COMPONENTS}_year`;
  const flush = async () => {
    if (!appender || year === null) return;
    appender.close();
    appender = null;
    const file = join(ctx.out, RATING_COMPONENTS, `${year}.parquet`);
    await exportParquetFile(ctx.conn, table, file, ["date", "publish_date"], undefined, KEYED_ROW_GROUP);
  };
  return {
    async add(date: string, columns: JsColumn[], rows: number) {
      if (date.slice(0, 4) !== year) {
        await flush();
        year = date.slice(0, 4);
        appender = await columnAppender(ctx.conn, table, COMPONENT_COLUMNS);
      }
      appender!.append(columns, rows);
    },
    end: flush,
    async drop() {
      appender?.close();
      await ctx.conn.run(`drop table if exists ${table}`);
    },
  };
}

export async function modelRatingsStage(
  ctx: Pick<StageContext, "conn" | "out" | "log">,
  frames: { panel: PricePanel; companies: Company[]; ratings: RatingRow[] },
  sourceDir?: string,
): Promise<void> {
  const t0 = performance.now();
  const known = new Set(frames.panel.tickers.map((t) => t.toUpperCase()));
  const statements = sourceDir ? await readModelStatements(join(sourceDir, "fundamentals"), known) : new Map();
  const tStatements = performance.now();
  const ratings: RatingRow[] = [];
  let covered = 0;
  const parts = componentParts(ctx);
  try {
    for (const day of factorModel(frames.panel, frames.companies, statements)) {
      for (const r of day.ratings) ratings.push(r);
      for (const y of day.components.fiscalYear) if (y !== 0) covered++;
      await parts.add(day.date, componentColumns(day.date, day.components), day.ratings.length);
    }
    await parts.end();
  } finally {
    await parts.drop();
  }
  frames.ratings = ratings;
  const tModel = performance.now();
  const table = await columnAppender(ctx.conn, "ratings", [
    ["date", "varchar"],
    ["ticker", "varchar"],
    ...RATING_NAMES.map((n): [string, ChunkKind] => [n, "double"]),
  ]);
  table.append([ratings.map((r) => r.date), ratings.map((r) => r.ticker), ...ratingColumns(ratings)], ratings.length);
  table.close();
  await exportParquetFile(ctx.conn, "ratings", join(ctx.out, "ratings.parquet"), ["date"], "date, ticker");
  ctx.log.info(
    {
      rows: ratings.length,
      companiesWithStatements: statements.size,
      withStatements: ratings.length ? Math.round((1000 * covered) / ratings.length) / 1000 : 0,
      ms: Math.round(performance.now() - t0),
      // the parts: statements read; factors, scores and the components appended; the tables exported
      statementsMs: Math.round(tStatements - t0),
      modelMs: Math.round(tModel - tStatements),
    },
    "no vendor ratings: computed by the factor model",
  );
}
