// Query schemas shared by stock and portfolio analytics; the rows and series come from
// resources/analytics.ts.
import { z } from "zod";
import { SERIES_TYPES, type SeriesType } from "../../pipeline/analytics/index.ts";
import { MAX_COMPARE } from "../resources/compare.ts";
import { benchmarkParam, isValidDate, periodParam } from "./params.ts";

/** A window bound (issue #41, an extension: the interface's reads take no date range). */
const windowDate = (which: "first" | "last") =>
  z
    .string({ error: "must be a date YYYY-MM-DD" })
    .refine(isValidDate, { error: "must be a valid calendar date YYYY-MM-DD" })
    .optional()
    .meta({
      description:
        `The window's ${which} date (YYYY-MM-DD, inclusive; an extension): metrics and series over the daily ` +
        "returns dated within [start, end], computed as for the whole history; default unbounded",
    });
const windowParams = { start: windowDate("first"), end: windowDate("last") };

/** `compare`'s ids: comma-separated, blanks and repeats dropped. */
export const compareIds = (s: string | undefined) =>
  [...new Set((s ?? "").split(",").map((x) => x.trim()))].filter(Boolean);
const compareParam = z
  .string()
  .refine((s) => compareIds(s).length > 0 && compareIds(s).length <= MAX_COMPARE, {
    error: `must name 1 to ${MAX_COMPARE} comma-separated ids`,
  })
  .optional();
const compareOf = (what: string) =>
  compareParam.meta({
    description:
      `Up to ${MAX_COMPARE} comma-separated ${what} to add side by side (an extension): their columns or series, ` +
      "every subject over the common period within the window",
  });

/** start after end, or a window with `period`, is a 400 naming the parameter. */
function checkWindow(q: { start?: string; end?: string; period?: number }, ctx: z.RefinementCtx): void {
  if (q.start !== undefined && q.end !== undefined && q.start > q.end)
    ctx.addIssue({ code: "custom", path: ["end"], message: "must not be before start" });
  if (q.period !== undefined && (q.start !== undefined || q.end !== undefined))
    ctx.addIssue({ code: "custom", path: ["period"], message: "cannot be combined with start or end" });
}

const metricsBase = { benchmark: benchmarkParam, period: periodParam, ...windowParams };
export const stockMetricsQuery = z.object({ ...metricsBase, compare: compareOf("tickers") }).superRefine(checkWindow);
export const portfolioMetricsQuery = z
  .object({ ...metricsBase, compare: compareOf("portfolio ids") })
  .superRefine(checkWindow);

const performanceBase = {
  type: z
    .enum(SERIES_TYPES as unknown as [SeriesType, ...SeriesType[]], {
      error: `must be one of ${SERIES_TYPES.join(", ")}`,
    })
    .default("cumulative_return" as SeriesType)
    .meta({ description: "Series type; rolling_beta requires benchmark" }),
  benchmark: benchmarkParam,
  ...windowParams,
};
export const stockPerformanceQuery = z
  .object({ ...performanceBase, compare: compareOf("tickers") })
  .superRefine(checkWindow);
export const portfolioPerformanceQuery = z
  .object({ ...performanceBase, compare: compareOf("portfolio ids") })
  .superRefine(checkWindow);

/** The window's and compare's part of a cache key: nothing without them, so those keys stay as they were. */
export const windowKey = (p: { start?: string; end?: string; compare?: string }) =>
  p.start === undefined && p.end === undefined && p.compare === undefined
    ? []
    : [p.start ?? null, p.end ?? null, ...(p.compare === undefined ? [] : compareIds(p.compare))];
