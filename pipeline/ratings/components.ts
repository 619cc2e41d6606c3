// A stock's rating components on one date as the API serves them: one entry per factor of the
// model (factors.ts order), its raw value and 0..10 score (null: no input, the stock was rated on
// its other factors), and for the statement factors the fiscal year and publish date they came from.
import type { RatingComponent } from "../types.ts";
import { FACTORS } from "./factors.ts";

export type { RatingComponent };

/** The components of one wide `rating_components` row (column name → value; dates as ISO text). */
export function componentsOfRow(row: Record<string, unknown>): RatingComponent[] {
  const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) ? v : null);
  const fiscalYear = num(row.fiscal_year);
  const publishDate = typeof row.publish_date === "string" ? row.publish_date : null;
  return FACTORS.map((f) => {
    const raw = num(row[f.name]);
    const fromStatement = f.statement && raw !== null;
    return {
      rating: f.rating,
      factor: f.name,
      raw,
      score: num(row[`${f.name}_score`]),
      fiscalYear: fromStatement ? fiscalYear : null,
      publishDate: fromStatement ? publishDate : null,
    };
  });
}
