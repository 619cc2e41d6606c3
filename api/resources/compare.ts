// Side by side (issue #41 item 2, an extension): `compare` adds other stocks' or portfolios' metric
// columns or series to a subject's answer. Every subject is read over the common period within the
// range — from the latest first date to the earliest last date — by the very functions of a single
// read (metricsOf, seriesOf), so a compared column is what that subject's own read over the same
// dates answers.
import type { SeriesObject, SeriesType } from "../../pipeline/analytics/index.ts";
import type { BenchmarkResult } from "../../pipeline/store/snapshot/model.ts";
import type { MetricRow, ReturnSeries } from "../../pipeline/types.ts";
import { ApiError, InvalidParameter } from "../errors.ts";
import { metricsOf, type Range, type Subject, seriesOf, stockReturnsOf, stockSubject } from "./analytics.ts";
import type { ReadContext } from "./context.ts";
import { portfolioSubject, visiblePortfolio } from "./portfolios.ts";
import type { SnapshotRef } from "./snapshot-access.ts";
import { stockByTicker } from "./stocks.ts";

export const MAX_COMPARE = 10;

/** A compared subject and the name of its column or series in the answer. */
export interface Compared {
  subject: Subject;
  label: string;
}

/** Each of `ids` resolved by `find`; one it cannot find is a 400 naming `compare` (not a 404 of the path). */
export async function resolveCompared(ids: readonly string[], find: (id: string) => Promise<Compared>) {
  const out: Compared[] = [];
  for (const id of ids) {
    try {
      out.push(await find(id));
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) throw InvalidParameter.one("compare", e.message);
      throw e;
    }
  }
  return out;
}

/** The stocks `ids` name, each with its returns (`load`: GraphQL's batched reads); an unknown one is a 400. */
export const comparedStocks = (s: SnapshotRef, ids: readonly string[], load = stockReturnsOf(s)) =>
  resolveCompared(ids, async (t) => {
    const c = await stockByTicker(s, t);
    return { subject: await stockSubject(c, load), label: c.ticker };
  });

/** The portfolios `ids` name, visible to the caller as any portfolio read is; an unknown one is a 400. */
export const comparedPortfolios = (ctx: ReadContext, ids: readonly string[]) =>
  resolveCompared(ids, async (id) => {
    const v = await visiblePortfolio(ctx, id);
    return { subject: portfolioSubject(v), label: `Portfolio ${v.id}` };
  });

/** The common period of `all` within `range`: null when they share no date. */
export function commonRange(all: readonly ReturnSeries[], range: Range): Range | null {
  let start = range.start;
  let end = range.end;
  for (const r of all) {
    const first = r.dates[0];
    const last = r.dates.at(-1);
    if (first === undefined || last === undefined) return null;
    if (start === undefined || first > start) start = first;
    if (end === undefined || last < end) end = last;
  }
  return start !== undefined && end !== undefined && start > end ? null : { start, end };
}

/** `period` first (back from each latest date), then the common period: what `compare` reads. */
const common = (main: Subject, others: readonly Compared[], range: Range) =>
  commonRange(
    [main, ...others.map((o) => o.subject)].map((s) => s.returns),
    range.period === undefined ? range : { start: periodStart(main.returns, range.period) },
  );
const periodStart = (r: ReturnSeries, years: number) => {
  const last = r.dates.at(-1);
  if (last === undefined) return undefined;
  const d = new Date(Date.parse(last) - years * 365.25 * 86_400_000 + 86_400_000);
  return d.toISOString().slice(0, 10);
};

/** The subject's metric rows with a column per compared subject (rows only one of them has: "-" elsewhere). */
export async function compareMetricsOf(
  s: SnapshotRef,
  main: Subject,
  others: readonly Compared[],
  bench: BenchmarkResult | undefined,
  range: Range,
): Promise<MetricRow[]> {
  const r = common(main, others, range);
  if (!r) return [];
  const rows = (await metricsOf(s, main, bench, r)).map((row) => ({ ...row }));
  const columns = [main.column, ...(bench ? [bench.name] : [])];
  for (const o of others) {
    const theirs = new Map((await metricsOf(s, o.subject, bench, r)).map((x) => [x.metric, x[o.subject.column]]));
    for (const row of rows) row[o.label] = theirs.get(row.metric) ?? "-";
    for (const [metric, display] of theirs)
      if (!rows.some((x) => x.metric === metric)) {
        const added: MetricRow = { metric };
        for (const c of [...columns, ...others.map((x) => x.label)]) added[c] = "-";
        added[o.label] = display ?? "-";
        rows.push(added);
      }
  }
  return rows;
}

/** The subject's series (and the benchmark's), then each compared subject's, over the common period. */
export function compareSeriesOf(
  type: SeriesType,
  main: Subject,
  name: string,
  others: readonly Compared[],
  bench: BenchmarkResult | undefined,
  range: Range,
): SeriesObject[] {
  const r = common(main, others, range);
  if (!r) return [name, ...others.map((o) => o.label)].map((n) => ({ name: n, data: [] }));
  const out = seriesOf(type, name, main.returns, bench, r);
  for (const o of others)
    out.push(...seriesOf(type, o.label, o.subject.returns, bench, r).filter((x) => x.name === o.label));
  return out;
}
