// Analytics: the daily return convention, every metric row of contract §6, the nine series types.

export { formatMetric, type MetricFormat } from "./format.ts";
export { type MetricCells, metricCells, metricRows, metricRowsOf } from "./metrics/table.ts";
export { avgAnnualTurnover, TURNOVER_LABEL, turnoverRow } from "./metrics/turnover.ts";
export { alignBenchmark, sliceByPeriod, sliceByWindow, stockReturns } from "./returns.ts";
export { performanceSeries, SERIES_TYPES, type SeriesObject, type SeriesType } from "./series/index.ts";
