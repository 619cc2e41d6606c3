// Metric rows (display string and numeric value) and the nine performance series types, shared
// by stocks and portfolios. Series points and metric rows are values of one resource, returned
// whole (as REST does), not paged nodes.
import {
  GraphQLEnumType,
  type GraphQLFieldConfig,
  GraphQLFloat,
  GraphQLID,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLString,
} from "graphql";
import { SERIES_TYPES, type SeriesObject, type SeriesType } from "../../../pipeline/analytics/index.ts";
import type { MetricRow } from "../../../pipeline/types.ts";
import { InvalidParameter } from "../../errors.ts";
import { benchmarkOf, checkRollingBeta, metricsOf, type Subject, seriesOf } from "../../resources/analytics.ts";
import { type Compared, compareMetricsOf, compareSeriesOf, MAX_COMPARE } from "../../resources/compare.ts";
import { isValidDate } from "../../rest/params.ts";
import type { GqlContext } from "../context.ts";
import { costNote } from "../cost.ts";
import { inTurn, inTurns } from "../field-turns.ts";

/** Series points completed per turn of the event loop (a 15-year daily series has about 3,800). */
const POINTS_PER_TURN = 1000;

/** The displayed figure as a number: "25.1%" → 0.251, "1,303.90%" → 13.039, "1.13" → 1.13; dates and "-" → null. */
export function metricNumber(display: string): number | null {
  if (/^\d{4}-\d{2}-\d{2}$/.test(display)) return null;
  const pct = display.endsWith("%");
  const n = Number(display.replace(/,/g, "").replace(/%$/, ""));
  if (display === "" || !Number.isFinite(n)) return null;
  return pct ? Number((n / 100).toPrecision(12)) : n;
}

const MetricValue = new GraphQLObjectType({
  name: "MetricValue",
  description: "One column of a metric row: the subject (ticker or Portfolio) or the benchmark (its name).",
  fields: {
    column: { type: new GraphQLNonNull(GraphQLString) },
    display: { type: new GraphQLNonNull(GraphQLString), description: "As REST writes it (contract §6 formats)" },
    number: {
      type: GraphQLFloat,
      description:
        'The displayed figure as a number; percentages as fractions ("25.1%" → 0.251); null for dates and "-"',
    },
  },
});

export const MetricRowType = new GraphQLObjectType<MetricRow>({
  name: "MetricRow",
  fields: {
    metric: {
      type: new GraphQLNonNull(GraphQLString),
      description: "Label exactly as contract §6 (some end in a space)",
    },
    values: {
      type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(MetricValue))),
      resolve: (row) =>
        Object.entries(row)
          .filter(([k]) => k !== "metric")
          .map(([column, display]) => ({ column, display, number: metricNumber(display) })),
    },
  },
});

const enumName = (t: string) => t.toUpperCase();
export const PerformanceTypeEnum = new GraphQLEnumType({
  name: "PerformanceType",
  values: Object.fromEntries(SERIES_TYPES.map((t) => [enumName(t), { value: t }])),
});

const HistogramBin = new GraphQLObjectType({
  name: "HistogramBin",
  fields: {
    start: { type: new GraphQLNonNull(GraphQLFloat) },
    end: { type: new GraphQLNonNull(GraphQLFloat) },
    count: { type: new GraphQLNonNull(GraphQLInt) },
  },
});

const f = GraphQLFloat;
const SeriesPoint = new GraphQLObjectType<Record<string, number | string>>({
  name: "SeriesPoint",
  description:
    "A point of a series: date and return for most types; year and month for " +
    "monthly_heatmap; the statistics for boxplot.",
  fields: {
    date: { type: GraphQLString },
    return: { type: f },
    year: { type: GraphQLInt },
    month: { type: GraphQLInt },
    period: { type: GraphQLString },
    min: { type: f },
    q1: { type: f },
    median: { type: f },
    q3: { type: f },
    max: { type: f },
    mean: { type: f },
    whiskerLow: { type: f },
    whiskerHigh: { type: f },
    count: { type: GraphQLInt },
  },
});

export const PerformanceSeriesType = new GraphQLObjectType<SeriesObject, GqlContext>({
  name: "PerformanceSeries",
  fields: {
    name: { type: new GraphQLNonNull(GraphQLString), description: "Ticker, Portfolio, or the benchmark's name" },
    window: { type: GraphQLInt, description: "Rolling window in days (rolling types)" },
    bins: { type: new GraphQLList(new GraphQLNonNull(HistogramBin)), description: "Histogram bins (histogram)" },
    data: {
      type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(SeriesPoint))),
      // thousands of daily points: completed POINTS_PER_TURN at a time, a turn each (field-turns.ts)
      resolve: (series, _a, ctx) => inTurns(ctx.deadline, series.data, POINTS_PER_TURN),
    },
  },
});

type WindowArgs = { start?: string | null; end?: string | null; compare?: string[] | null };
const windowArgs = {
  start: { type: GraphQLString, description: "The window's first date, YYYY-MM-DD, inclusive (an extension)" },
  end: { type: GraphQLString, description: "The window's last date, YYYY-MM-DD, inclusive (an extension)" },
  compare: {
    type: new GraphQLList(new GraphQLNonNull(GraphQLString)),
    description:
      `Up to ${MAX_COMPARE} tickers (on a stock) or portfolio ids (on a portfolio) side by side, every subject ` +
      "over the common period within the window (an extension; as REST's compare)",
  },
};

/** Resolves `compare`'s ids to subjects of the field's kind. */
export type CompareOf = (ids: string[], ctx: GqlContext) => Promise<Compared[]>;

/** The compared subjects (null without `compare`); none, more than 10 or an unknown id: an error naming it. */
async function comparedOf(args: WindowArgs, ctx: GqlContext, compareOf: CompareOf): Promise<Compared[] | null> {
  if (args.compare == null) return null;
  const ids = [...new Set(args.compare.map((x) => x.trim()))].filter(Boolean);
  if (ids.length === 0 || ids.length > MAX_COMPARE)
    throw InvalidParameter.one("compare", `must name 1 to ${MAX_COMPARE} ids`);
  return compareOf(ids, ctx);
}

/** The window of the arguments, checked as REST checks it (a bad bound is an error naming it). */
function windowOf(args: WindowArgs & { period?: number | null }): { start?: string; end?: string } {
  for (const k of ["start", "end"] as const)
    if (args[k] != null && !isValidDate(args[k]))
      throw InvalidParameter.one(k, "must be a valid calendar date YYYY-MM-DD");
  if (args.start != null && args.end != null && args.start > args.end)
    throw InvalidParameter.one("end", "must not be before start");
  if (args.period != null && (args.start != null || args.end != null))
    throw InvalidParameter.one("period", "cannot be combined with start or end");
  return { start: args.start ?? undefined, end: args.end ?? undefined };
}

/** `metrics(benchmark, period, start, end)` on a subject type. */
export function metricsField<S>(
  subjectOf: (source: S, ctx: GqlContext) => Promise<Subject>,
  compareOf: CompareOf,
): GraphQLFieldConfig<S, GqlContext, { benchmark?: string | null; period?: number | null } & WindowArgs> {
  return {
    type: new GraphQLList(new GraphQLNonNull(MetricRowType)),
    description: `Metric rows against the benchmark (contract §6). ${costNote("metrics")}`,
    args: {
      benchmark: { type: GraphQLID, description: "Benchmark id (see benchmarks)" },
      period: {
        type: GraphQLFloat,
        description: "Years of returns back from the latest date (> 0); default the whole history",
      },
      ...windowArgs,
    },
    async resolve(source, args, ctx) {
      if (args.period != null && !(args.period > 0 && args.period <= 1000))
        throw InvalidParameter.one("period", "must be a number of years greater than 0");
      const range = { period: args.period ?? undefined, ...windowOf(args) };
      const subject = await subjectOf(source, ctx);
      const bench = await benchmarkOf(ctx.snapshot, args.benchmark);
      const others = await comparedOf(args, ctx, compareOf);
      if (others) {
        const rows = await compareMetricsOf(ctx.snapshot, subject, others, bench, range);
        return inTurn(ctx.deadline, () => rows);
      }
      const whole = range.period === undefined && range.start === undefined && range.end === undefined;
      const stored = whole ? await ctx.batch.storedMetrics(subject.kind, subject.id, bench) : undefined;
      const rows = await metricsOf(ctx.snapshot, subject, bench, range, stored);
      return inTurn(ctx.deadline, () => rows);
    },
  };
}

/** `performance(type, benchmark)` on a subject type. */
export function performanceField<S>(
  subjectOf: (source: S, ctx: GqlContext) => Promise<Subject>,
  compareOf: CompareOf,
): GraphQLFieldConfig<S, GqlContext, { type: SeriesType; benchmark?: string | null } & WindowArgs> {
  return {
    type: new GraphQLList(new GraphQLNonNull(PerformanceSeriesType)),
    description: `The subject's series and the benchmark's. ${costNote("performance")}`,
    args: {
      type: { type: new GraphQLNonNull(PerformanceTypeEnum), defaultValue: "cumulative_return" },
      benchmark: { type: GraphQLID, description: "Benchmark id; required for ROLLING_BETA" },
      ...windowArgs,
    },
    async resolve(source, args, ctx) {
      const range = windowOf(args);
      const subject = await subjectOf(source, ctx);
      const bench = await benchmarkOf(ctx.snapshot, args.benchmark);
      checkRollingBeta(args.type, bench);
      const others = await comparedOf(args, ctx, compareOf);
      return inTurn(ctx.deadline, () =>
        others
          ? compareSeriesOf(args.type, subject, subject.column, others, bench, range)
          : seriesOf(args.type, subject.column, subject.returns, bench, range),
      );
    },
  };
}
