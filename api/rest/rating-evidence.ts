// GET /rating_evidence?horizon=1|3|6|12&rating=…: what every rating the snapshot serves predicted
// (docs/ratings.md, "The evidence"). JSON: one object per rating with its IC series nested. CSV and
// Arrow: one row per rating and evaluated date (date, ic, stocks) with the rating's summary repeated
// on each, the quintile means as quintileReturns.1 … .5; a rating with no evaluated date is one row
// with date, ic and stocks empty.
import { z } from "zod";
import {
  EVIDENCE_RATINGS,
  HORIZONS,
  type Horizon,
  QUINTILES,
  type RatingEvidence,
} from "../../pipeline/ratings/evidence.ts";
import type { ColumnKind } from "../output/arrow.ts";
import { rowsToArrow } from "../output/arrow.ts";
import { type FlatRow, toCsv } from "../output/csv.ts";
import type { Payload } from "../output/payload.ts";
import { HORIZON_MESSAGE, RATING_MESSAGE, ratingEvidenceRows } from "../resources/rating-evidence.ts";
import { defineRoute } from "./route.ts";

export const ratingEvidenceQuery = z.object({
  // exactly these texts (no "01" or "1.0"): the query's values, as the OpenAPI document lists them
  horizon: z
    .enum(HORIZONS.map((h) => String(h)) as ["1", "3", "6", "12"], { error: HORIZON_MESSAGE })
    .default("1")
    .transform((h) => Number(h) as Horizon)
    .meta({ description: "Forward horizon in calendar months: 1, 3, 6 or 12 (default 1)" }),
  rating: z
    .enum(EVIDENCE_RATINGS, { error: RATING_MESSAGE })
    .optional()
    .meta({ description: "One rating (snake_case) or momentum_12_1_baseline; every one when omitted" }),
});

const num = z.number().nullable();
export const RatingEvidenceSchema = z
  .object({
    rating: z.enum(EVIDENCE_RATINGS),
    horizon: z.number().int(),
    dates: z.number().int().meta({ description: "Evaluated rating dates" }),
    meanIc: num.meta({ description: "Mean of the per-date Spearman ICs" }),
    icStd: num.meta({ description: "Their sample standard deviation (n − 1)" }),
    icir: num.meta({ description: "meanIc / icStd" }),
    tStat: num.meta({ description: "meanIc / (icStd / √dates)" }),
    hitRate: num.meta({ description: "Share of dates with ic > 0" }),
    quintileReturns: z.array(z.number()).meta({ description: "Mean forward return per quintile, lowest first" }),
    spread: num.meta({ description: "Fifth quintile minus first" }),
    topTurnover: num.meta({ description: "Mean share of the top quintile new since the previous date" }),
    ic: z.array(z.object({ date: z.string().meta({ format: "date" }), ic: z.number(), stocks: z.number().int() })),
  })
  .meta({ id: "RatingEvidence" });

const QUINTILE_COLS = Array.from({ length: QUINTILES }, (_, q) => `quintileReturns.${q + 1}`);
const SUMMARY_COLS = ["rating", "horizon", "dates", "meanIc", "icStd", "icir", "tStat", "hitRate"] as const;
const TAIL_COLS = ["spread", "topTurnover"] as const;
export const RATING_EVIDENCE_COLUMNS = [...SUMMARY_COLS, ...QUINTILE_COLS, ...TAIL_COLS, "date", "ic", "stocks"];
const KINDS: Record<string, ColumnKind> = Object.fromEntries(
  RATING_EVIDENCE_COLUMNS.map((c) => [c, ["horizon", "dates", "stocks"].includes(c) ? "i32" : "f64"]),
);
KINDS.rating = "utf8";
delete KINDS.date; // a date column: typed from its values (Arrow dates)

/** The CSV's and Arrow's rows: one per rating and evaluated date, the summary repeated. */
function flatRows(list: RatingEvidence[]): FlatRow[] {
  return list.flatMap((r) => {
    const summary: FlatRow = {};
    for (const c of SUMMARY_COLS) summary[c] = r[c];
    QUINTILE_COLS.forEach((c, q) => {
      summary[c] = r.quintileReturns[q] ?? null;
    });
    for (const c of TAIL_COLS) summary[c] = r[c];
    const points = r.ic.length ? r.ic : [{ date: null, ic: null, stocks: null }];
    return points.map((p) => ({ ...summary, date: p.date, ic: p.ic, stocks: p.stocks }));
  });
}

const evidencePayload = (list: RatingEvidence[]): Payload => ({
  json: () => JSON.stringify(list),
  csv: () => toCsv(flatRows(list), RATING_EVIDENCE_COLUMNS),
  arrow: () => rowsToArrow(flatRows(list), RATING_EVIDENCE_COLUMNS, KINDS),
});

export const ratingEvidenceRoutes = [
  defineRoute({
    id: "rating_evidence",
    endpoint: "rating_evidence",
    path: "/rating_evidence",
    summary: "What every rating predicted: IC series, summary, quintiles, turnover (and the momentum baseline)",
    query: ratingEvidenceQuery,
    response: z.array(RatingEvidenceSchema),
    async resolve({ snapshot, params }) {
      return {
        key: JSON.stringify([params.horizon, params.rating ?? null]),
        build: async () => evidencePayload(await ratingEvidenceRows(snapshot, params)),
      };
    },
  }),
];
