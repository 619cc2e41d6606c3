// Query schemas shared by stock and portfolio analytics; the rows and series come from
// resources/analytics.ts.
import { z } from "zod";
import { SERIES_TYPES, type SeriesType } from "../../pipeline/analytics/index.ts";
import { benchmarkParam, periodParam } from "./params.ts";

export const metricsQuery = z.object({ benchmark: benchmarkParam, period: periodParam });

export const performanceQuery = z.object({
  type: z
    .enum(SERIES_TYPES as unknown as [SeriesType, ...SeriesType[]], {
      error: `must be one of ${SERIES_TYPES.join(", ")}`,
    })
    .default("cumulative_return" as SeriesType)
    .meta({ description: "Series type; rolling_beta requires benchmark" }),
  benchmark: benchmarkParam,
});
