// The rating evidence (pipeline/ratings/evidence.ts): one object per rating at one horizon, the
// seven ratings and then the momentum baseline, in the shape REST and GraphQL both serve.
import {
  EVIDENCE_RATINGS,
  type EvidenceRating,
  HORIZONS,
  type Horizon,
  type RatingEvidence,
} from "../../pipeline/ratings/evidence.ts";
import { InvalidParameter } from "../errors.ts";
import type { SnapshotRef } from "./snapshot-access.ts";
import * as access from "./snapshot-access.ts";

export interface EvidenceQuery {
  horizon: Horizon;
  /** One rating (or the baseline); all when omitted. */
  rating?: EvidenceRating;
}

export const HORIZON_MESSAGE = `must be one of ${HORIZONS.join(", ")}`;
export const RATING_MESSAGE = `must be one of ${EVIDENCE_RATINGS.join(", ")}`;

/** GraphQL's arguments checked as REST's zod schema checks the query (the same messages). */
export function evidenceQueryOf(horizon: number, rating?: string | null): EvidenceQuery {
  if (!(HORIZONS as readonly number[]).includes(horizon)) throw InvalidParameter.one("horizon", HORIZON_MESSAGE);
  if (rating != null && !(EVIDENCE_RATINGS as readonly string[]).includes(rating))
    throw InvalidParameter.one("rating", RATING_MESSAGE);
  return { horizon: horizon as Horizon, rating: (rating ?? undefined) as EvidenceRating | undefined };
}

/** The published fields in their published order (the stored rows may carry others). */
const evidenceObject = (r: RatingEvidence): RatingEvidence => ({
  rating: r.rating,
  horizon: r.horizon,
  dates: r.dates,
  meanIc: r.meanIc,
  icStd: r.icStd,
  icir: r.icir,
  tStat: r.tStat,
  hitRate: r.hitRate,
  quintileReturns: r.quintileReturns,
  spread: r.spread,
  topTurnover: r.topTurnover,
  ic: r.ic,
});

export async function ratingEvidenceRows(s: SnapshotRef, q: EvidenceQuery): Promise<RatingEvidence[]> {
  const all = await access.ratingEvidence(s);
  return all
    .filter((r) => r.horizon === q.horizon && (q.rating === undefined || r.rating === q.rating))
    .map(evidenceObject);
}
