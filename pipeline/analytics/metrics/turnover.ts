// Average annual turnover (issue #41): a portfolio's trading per year, beside the metric table of
// a portfolio with trading costs. The initial purchase from cash is not trading away from a
// portfolio, so it is left out; the years are calendar days / 365, as CAGR counts them.
import { formatMetric } from "../format.ts";

export const TURNOVER_LABEL = "Avg. Annual Turnover ";

/** The turnover of the rebalances dated within `dates` (but the very first one), per year of `dates`. */
export function avgAnnualTurnover(dates: readonly string[], rebalances: readonly { date: string; turnover: number }[]) {
  const first = dates[0];
  const last = dates.at(-1);
  if (first === undefined || last === undefined || first === last) return NaN;
  let sum = 0;
  rebalances.forEach((r, i) => {
    if (i > 0 && r.date >= first && r.date <= last) sum += r.turnover;
  });
  return sum / ((Date.parse(last) - Date.parse(first)) / 86_400_000 / 365);
}

/** The metric row of it: the subject's column, and "-" in a benchmark's (a benchmark does not trade). */
export function turnoverRow(value: number, column: string, benchmarkName?: string): Record<string, string> {
  const row: Record<string, string> = { metric: TURNOVER_LABEL, [column]: formatMetric("percent", value) };
  if (benchmarkName !== undefined) row[benchmarkName] = "-";
  return row;
}
