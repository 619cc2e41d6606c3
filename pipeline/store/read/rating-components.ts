// One stock's rating components on one date from the snapshot's `rating_components` table (written
// by the factor model's stage, pipeline/stages/model-ratings.ts). A snapshot of vendor ratings has
// no such table: no components.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { componentsOfRow, type RatingComponent } from "../../ratings/components.ts";
import { Binds, type Conn, rows } from "../duck/duck.ts";

export const RATING_COMPONENTS_FILE = "rating_components.parquet";

export async function readRatingComponents(
  conn: Conn,
  dir: string,
  upperTicker: string,
  date: string,
): Promise<RatingComponent[]> {
  const file = join(dir, RATING_COMPONENTS_FILE);
  if (!existsSync(file)) return [];
  const b = new Binds();
  const sql =
    `select * replace (strftime(date, '%Y-%m-%d') as date, strftime(publish_date, '%Y-%m-%d') as publish_date) ` +
    `from read_parquet(${b.v(file)}) where upper(ticker) = ${b.v(upperTicker)} and date = ${b.v(date)}::date`;
  const [row] = await rows(conn, sql, b.params);
  return row ? componentsOfRow(row) : [];
}
