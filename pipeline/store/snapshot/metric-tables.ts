// Metric rows as a typed long table, one row per (subject, benchmark, metric):
//   stock_metrics / portfolio_metrics(subject, benchmark, ord, metric, display, value,
//                                     benchmark_display, benchmark_value)
// `display` is the published text of the subject's column, `value` the number behind it (null for
// dates and undefined numbers); the benchmark_* pair is the benchmark's own column (null without one).
import type { MetricCells } from "../../analytics/index.ts";
import { metricRowsOf } from "../../analytics/index.ts";
import type { MetricRow } from "../../types.ts";
import { type Conn, columns, type Params } from "../duck/duck.ts";
import type { Cell, ColKind } from "../duck/write.ts";
import { metricsKey } from "./model.ts";

export const METRIC_COLS: [string, ColKind][] = [
  ["subject", "varchar"],
  ["benchmark", "varchar"],
  ["ord", "integer"],
  ["metric", "varchar"],
  ["display", "varchar"],
  ["value", "double"],
  ["benchmark_display", "varchar"],
  ["benchmark_value", "double"],
];
export const METRIC_ORDER = "subject, benchmark nulls first, ord";

/** Table rows of one subject's table (benchmarkId null: the plain table). */
export function* metricTableRows(subject: string, benchmarkId: string | null, t: MetricCells): Generator<Cell[]> {
  for (let i = 0; i < t.labels.length; i++) {
    const b = t.benchmark?.[i];
    yield [subject, benchmarkId, i, t.labels[i], t.subject[i][0], t.subject[i][1], b?.[0] ?? null, b?.[1] ?? null];
  }
}

/**
 * Reads a metric table (`source`: a SQL relation) into API rows keyed like Snapshot.metrics.
 * `column` names the subject's column (a stock's ticker, "Portfolio"); `benchName` a benchmark id's name.
 */
export async function readMetricRows(
  conn: Conn,
  source: string,
  kind: "stock" | "portfolio",
  column: (subject: string) => string,
  benchName: (id: string) => string,
  into: Map<string, MetricRow[]>,
  where = "",
  params?: Params,
): Promise<void> {
  const [subj = [], bench = [], metric = [], display = [], bdisplay = []] = (await columns(
    conn,
    `select subject, benchmark, metric, display, benchmark_display from ${source} ${where} order by ${METRIC_ORDER}`,
    params,
  )) as (string | null)[][];
  let start = 0;
  for (let i = 1; i <= subj.length; i++) {
    if (i < subj.length && subj[i] === subj[start] && bench[i] === bench[start]) continue;
    const s = subj[start]!;
    const b = bench[start];
    const labels = metric.slice(start, i) as string[];
    const texts = display.slice(start, i) as string[];
    into.set(
      metricsKey(kind, s, b),
      b === null
        ? metricRowsOf(labels, column(s), texts)
        : metricRowsOf(labels, column(s), texts, benchName(b), bdisplay.slice(start, i) as string[]),
    );
    start = i;
  }
}
