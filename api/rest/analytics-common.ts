// Shared by stock and portfolio analytics: the benchmark parameter, metric rows (stored for the
// full period, computed from stored returns for a custom period) and performance series.
import { z } from "zod";
import { alignBenchmark, metricRows, performanceSeries, SERIES_TYPES, sliceByPeriod, type SeriesType } from "../../pipeline/analytics/index.ts";
import { metricsKey, type BenchmarkResult, type Snapshot } from "../../pipeline/store/model.ts";
import type { MetricRow, ReturnSeries } from "../../pipeline/types.ts";
import { InvalidParameter } from "../errors.ts";
import { metricsPayload, seriesPayload, type Payload } from "../output/payload.ts";
import { benchmarkParam, periodParam } from "./params.ts";

export const metricsQuery = z.object({ benchmark: benchmarkParam, period: periodParam });

export const performanceQuery = z.object({
  type: z
    .enum(SERIES_TYPES as unknown as [SeriesType, ...SeriesType[]], { error: `must be one of ${SERIES_TYPES.join(", ")}` })
    .default("cumulative_return" as SeriesType)
    .meta({ description: "Series type; rolling_beta requires benchmark" }),
  benchmark: benchmarkParam,
});

export function benchmarkOf(snapshot: Snapshot, id: string | undefined): BenchmarkResult | undefined {
  if (id === undefined) return undefined;
  const b = snapshot.benchmarkById.get(id);
  if (!b) throw InvalidParameter.one("benchmark", `unknown benchmark id ${JSON.stringify(id)}`);
  return b;
}

export function metricsBody(
  snapshot: Snapshot,
  kind: "stock" | "portfolio",
  id: string,
  column: string,
  returns: ReturnSeries,
  bench: BenchmarkResult | undefined,
  period: number | undefined,
): Payload {
  return metricsPayload(computeMetrics(snapshot, kind, id, column, returns, bench, period));
}

function computeMetrics(
  snapshot: Snapshot,
  kind: "stock" | "portfolio",
  id: string,
  column: string,
  returns: ReturnSeries,
  bench: BenchmarkResult | undefined,
  period: number | undefined,
): MetricRow[] {
  if (returns.dates.length === 0) return [];
  const stored = () => snapshot.metrics.get(metricsKey(kind, id, bench?.id ?? null));
  let subject = returns;
  let benchReturns = bench ? alignBenchmark(returns.dates, bench.levels) : undefined;
  if (period !== undefined) {
    subject = sliceByPeriod(returns, period);
    // a period covering the whole history is the stored full-period answer
    if (subject.dates.length === returns.dates.length) {
      const s = stored();
      if (s) return s;
    }
    if (benchReturns) benchReturns = sliceByPeriod(benchReturns, period);
  } else {
    const s = stored();
    if (s) return s;
  }
  return metricRows(subject, column, bench && benchReturns ? { name: bench.name, returns: benchReturns } : undefined);
}

export function performanceBody(
  type: SeriesType,
  name: string,
  returns: ReturnSeries,
  bench: BenchmarkResult | undefined,
): Payload {
  if (returns.dates.length === 0) return seriesPayload([{ name, data: [] }]);
  const series = performanceSeries(
    type,
    { name, returns },
    bench ? { name: bench.name, returns: alignBenchmark(returns.dates, bench.levels) } : undefined,
  );
  return seriesPayload(series);
}

export function checkRollingBeta(type: SeriesType, bench: BenchmarkResult | undefined): void {
  if (type === "rolling_beta" && !bench) throw InvalidParameter.one("benchmark", "rolling_beta requires benchmark");
}
