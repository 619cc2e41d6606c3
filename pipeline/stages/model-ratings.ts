// A source without vendor ratings: the factor model's ratings (pipeline/ratings/model.ts) into the
// frames and the staging folder, and each stock's components per rating date as `rating_components`
// (one row per stock and date: the statement the statement factors came from, how many factors had
// an input, and every factor's raw value and 0..10 score). The components are streamed into DuckDB a
// date at a time; only the ratings stay in the heap, as the price proxies' did.
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { FACTORS } from "../ratings/factors.ts";
import { factorModel } from "../ratings/model.ts";
import { readModelStatements } from "../ratings/statements.ts";
import { appendTable, type Cell, type ColKind, exportParquetFile, KEYED_ROW_GROUP } from "../store/duck/write.ts";
import { type Company, type PricePanel, RATING_NAMES, type RatingRow } from "../types.ts";
import type { StageContext } from "./context.ts";

export const RATING_COMPONENTS = "rating_components";

/** The components table's columns: the keys, the statement, then each factor's raw value and score. */
export const COMPONENT_COLUMNS: [string, ColKind][] = [
  ["date", "date"],
  ["ticker", "varchar"],
  ["fiscal_year", "integer"],
  ["publish_date", "date"],
  ["factors", "integer"],
  ...FACTORS.flatMap((f): [string, ColKind][] => [
    [f.name, "double"],
    [`${f.name}_score`, "double"],
  ]),
];

const cell = (x: number) => (Number.isFinite(x) ? x : null);

export async function modelRatingsStage(
  ctx: Pick<StageContext, "conn" | "out" | "log">,
  frames: { panel: PricePanel; companies: Company[]; ratings: RatingRow[] },
  sourceDir?: string,
): Promise<void> {
  const t0 = performance.now();
  const known = new Set(frames.panel.tickers.map((t) => t.toUpperCase()));
  const statements = sourceDir ? await readModelStatements(join(sourceDir, "fundamentals"), known) : new Map();
  const ratings: RatingRow[] = [];
  let covered = 0;
  const row: Cell[] = new Array<Cell>(COMPONENT_COLUMNS.length).fill(null);
  function* cells(): Generator<Cell[]> {
    for (const day of factorModel(frames.panel, frames.companies, statements)) {
      for (const r of day.ratings) ratings.push(r);
      for (const c of day.components) {
        if (c.fiscalYear !== null) covered++;
        row[0] = day.date;
        row[1] = c.ticker;
        row[2] = c.fiscalYear;
        row[3] = c.publishDate;
        row[4] = c.factors;
        for (let j = 0; j < FACTORS.length; j++) {
          row[5 + 2 * j] = cell(c.raw[j]);
          row[6 + 2 * j] = cell(c.score[j]);
        }
        yield row;
      }
    }
  }
  await appendTable(ctx.conn, RATING_COMPONENTS, COMPONENT_COLUMNS, cells());
  frames.ratings = ratings;
  await appendTable(
    ctx.conn,
    "ratings",
    [["date", "date"], ["ticker", "varchar"], ...RATING_NAMES.map((n): [string, "double"] => [n, "double"])],
    ratings.map((r) => [r.date, r.ticker, ...RATING_NAMES.map((n) => r[n])]),
  );
  await exportParquetFile(ctx.conn, "ratings", join(ctx.out, "ratings.parquet"), ["date"], "date, ticker");
  // by ticker, small row groups: a request for one stock's components decodes only its groups
  await exportParquetFile(
    ctx.conn,
    RATING_COMPONENTS,
    join(ctx.out, `${RATING_COMPONENTS}.parquet`),
    ["date", "publish_date"],
    "ticker, date",
    KEYED_ROW_GROUP,
  );
  await ctx.conn.run(`drop table ${RATING_COMPONENTS}`);
  ctx.log.info(
    {
      rows: ratings.length,
      companiesWithStatements: statements.size,
      withStatements: ratings.length ? Math.round((1000 * covered) / ratings.length) / 1000 : 0,
      ms: Math.round(performance.now() - t0),
    },
    "no vendor ratings: computed by the factor model",
  );
}
