// One stock's rating components on one date from the snapshot's `rating_components/<year>.parquet`
// (written by the factor model's stage, pipeline/stages/model-ratings.ts; rows in (date, ticker)
// order, so the date's row groups are the ones decoded). A snapshot of vendor ratings has no such
// folder: no components.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { componentsOfRow, type RatingComponent } from "../../ratings/components.ts";
import { Binds, type Conn, rows } from "../duck/duck.ts";

/** The folder of the components, one file per year of rating dates (pipeline/stages/model-ratings.ts). */
export const RATING_COMPONENTS_DIR = "rating_components";

export async function readRatingComponents(
  conn: Conn,
  dir: string,
  upperTicker: string,
  date: string,
): Promise<RatingComponent[]> {
  const file = join(dir, RATING_COMPONENTS_DIR, `${date.slice(0, 4)}.parquet`);
  if (!existsSync(file)) return [];
  const b = new Binds();
  const sql =
    `select * replace (strftime(date, '%Y-%m-%d') as date, strftime(publish_date, '%Y-%m-%d') as publish_date) ` +
    `from read_parquet(${b.v(file)}) where upper(ticker) = ${b.v(upperTicker)} and date = ${b.v(date)}::date`;
  const [row] = await rows(conn, sql, b.params);
  return row ? componentsOfRow(row) : [];
}
