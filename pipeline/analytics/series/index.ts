// The nine performance series types (contract §4): one builder per type.
import { boxplot, histogram, rollingBeta } from "./distribution.ts";
import {
  cumulativeReturn,
  drawdown,
  monthlyHeatmap,
  rollingSharpe,
  rollingVolatility,
  yearlyReturns,
} from "./simple.ts";
import type { Named, SeriesBuilder, SeriesObject } from "./types.ts";

export const SERIES_TYPES = [
  "cumulative_return",
  "yearly_returns",
  "histogram",
  "drawdown",
  "rolling_beta",
  "rolling_volatility",
  "rolling_sharpe",
  "monthly_heatmap",
  "boxplot",
] as const;
export type SeriesType = (typeof SERIES_TYPES)[number];

const BUILDERS: Record<SeriesType, SeriesBuilder> = {
  cumulative_return: cumulativeReturn,
  yearly_returns: yearlyReturns,
  histogram,
  drawdown,
  rolling_beta: rollingBeta,
  rolling_volatility: rollingVolatility,
  rolling_sharpe: rollingSharpe,
  monthly_heatmap: monthlyHeatmap,
  boxplot,
};

export function performanceSeries(type: SeriesType, subject: Named, benchmark?: Named): SeriesObject[] {
  return BUILDERS[type](subject, benchmark);
}

export type { SeriesObject };
