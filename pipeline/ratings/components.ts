// A stock's rating components on one date as the API serves them: one entry per factor of the
// model (factors.ts order), its raw value and 0..10 score (null: no input, the stock was rated on
// its other factors), and for the statement factors the fiscal year and publish date they came from.
// Stored one row per stock and date, the numbers in one blob (pipeline/stages/model-ratings.ts).
import type { RatingComponent } from "../types.ts";
import { FACTORS } from "./factors.ts";

export type { RatingComponent };

/** The `values` blob of a components row: raw values then scores, little-endian float64 (NaN: none). */
export function decodeValues(bytes: Uint8Array): Float64Array {
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  const view = new DataView(copy.buffer);
  return Float64Array.from({ length: bytes.length / 8 }, (_, i) => view.getFloat64(i * 8, true));
}

/** The components of one `rating_components` row (column name → value; dates as ISO text). */
export function componentsOfRow(row: Record<string, unknown>): RatingComponent[] {
  const num = (v: number) => (Number.isFinite(v) ? v : null);
  const fiscalYear = typeof row.fiscal_year === "number" ? row.fiscal_year : null;
  const publishDate = typeof row.publish_date === "string" ? row.publish_date : null;
  const values = decodeValues(row.values as Uint8Array);
  const f = FACTORS.length;
  return FACTORS.map((x, j) => {
    const raw = num(values[j]);
    const fromStatement = x.statement && raw !== null;
    return {
      rating: x.rating,
      factor: x.name,
      raw,
      score: num(values[f + j]),
      fiscalYear: fromStatement ? fiscalYear : null,
      publishDate: fromStatement ? publishDate : null,
    };
  });
}
