// Analytics: the daily return convention, every metric row of contract §6, the nine series types.
export { stockReturns, alignBenchmark, sliceByPeriod } from "./returns.ts";
export { metricCells, metricRows, metricRowsOf, type MetricCells } from "./metrics/table.ts";
export { formatMetric, type MetricFormat } from "./format.ts";
export { SERIES_TYPES, performanceSeries, type SeriesType, type SeriesObject } from "./series/index.ts";
