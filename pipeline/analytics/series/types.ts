import type { ReturnSeries } from "../../types.ts";

export interface SeriesObject {
  name: string;
  data: Record<string, number | string>[];
  window?: number;
  bins?: { start: number; end: number; count: number }[];
}

export interface Named {
  name: string;
  returns: ReturnSeries;
}

/** A series type: the subject's series objects, then the benchmark's (same dates) when given. */
export type SeriesBuilder = (subject: Named, benchmark?: Named) => SeriesObject[];

/** Applies a one-series transform to the subject and, when given, the benchmark. */
export const each =
  (one: (s: Named) => SeriesObject): SeriesBuilder =>
  (subject, benchmark) =>
    benchmark ? [one(subject), one(benchmark)] : [one(subject)];
