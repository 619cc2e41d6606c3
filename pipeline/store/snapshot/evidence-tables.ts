// The rating evidence's two snapshot tables (written by pipeline/stages/evidence.ts, read by
// pipeline/store/read/evidence-read.ts): `rating_evidence`, one row per rating and horizon with the
// summary (the five quintile means as columns q1..q5, lowest ratings first), and
// `rating_evidence_ic`, one row per rating, horizon and evaluated date.
import { EVIDENCE_RATINGS, QUINTILES, type RatingEvidence } from "../../ratings/evidence.ts";
import type { Cell, ColKind } from "../duck/write.ts";

export const EVIDENCE_TABLE = "rating_evidence";
export const EVIDENCE_IC_TABLE = "rating_evidence_ic";

const QUINTILE_COLS = Array.from({ length: QUINTILES }, (_, q) => `q${q + 1}`);

export const EVIDENCE_SUMMARY_COLUMNS: [string, ColKind][] = [
  ["rating", "varchar"],
  ["horizon", "integer"],
  ["ord", "integer"],
  ["dates", "integer"],
  ["mean_ic", "double"],
  ["ic_std", "double"],
  ["icir", "double"],
  ["t_stat", "double"],
  ["hit_rate", "double"],
  ...QUINTILE_COLS.map((c): [string, ColKind] => [c, "double"]),
  ["spread", "double"],
  ["top_turnover", "double"],
];

export const EVIDENCE_IC_COLUMNS: [string, ColKind][] = [
  ["rating", "varchar"],
  ["horizon", "integer"],
  ["date", "date"],
  ["ic", "double"],
  ["stocks", "integer"],
];

/** A summary row's cells, in EVIDENCE_SUMMARY_COLUMNS order (no evaluated date: null quintiles). */
export function evidenceRow(r: RatingEvidence): Cell[] {
  const q = QUINTILE_COLS.map((_, i) => r.quintileReturns[i] ?? null);
  const ord = EVIDENCE_RATINGS.indexOf(r.rating);
  return [
    r.rating,
    r.horizon,
    ord,
    r.dates,
    r.meanIc,
    r.icStd,
    r.icir,
    r.tStat,
    r.hitRate,
    ...q,
    r.spread,
    r.topTurnover,
  ];
}
