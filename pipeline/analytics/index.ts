// Analytics: the daily return convention, every metric row of contract §6, the nine series types.
export { stockReturns, alignBenchmark, sliceByPeriod } from "./returns.ts";
export { metricRows, metricLabels } from "./metrics/table.ts";
export { SERIES_TYPES, performanceSeries, type SeriesType, type SeriesObject } from "./series/index.ts";
