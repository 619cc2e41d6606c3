// Rule-based benchmarks are portfolios: their level is the backtest's compounded value index.
import type { LevelSeries, ReturnSeries } from "../types.ts";

/** Compounded value index of a return series, 1.0 on its first date whatever its first return. */
export function levelsFromReturns(r: ReturnSeries): LevelSeries {
  const levels = new Float64Array(r.returns.length);
  let v = 1;
  // The first return is 0.0 by convention (contract §4); it is ignored so the index starts at 1.
  for (let i = 0; i < levels.length; i++) levels[i] = v *= 1 + (i === 0 ? 0 : r.returns[i]);
  return { dates: r.dates, levels };
}
