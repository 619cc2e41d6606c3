// A planted signal (generate --plant-ic X): each month, the stocks' 12-1 month momentum on the first
// trading date (the model's own factor, pipeline/ratings/price-factors.ts, read off the prices as
// planted so far) gets a known cross-sectional link with their return to the next month's first
// trading date. Momentum is turned into normal scores z (probit of its rank), and every stock's
// log price over the month gains a·z, spread evenly over its days, with a = σ·ρ/√(1 − ρ²), σ the
// cross-sectional spread of that month's unplanted log returns (1.4826 × their median absolute
// deviation: the returns are fat-tailed, and ranks follow the body, not the tails) and ρ = 2 sin(π·IC/6):
// so the Pearson correlation of z and the month's log return is ρ, and the Spearman rank
// correlation of momentum and the return is the asked IC (for normal returns: Spearman = (6/π)
// asin(ρ/2)), on top of whatever link the simulation has by itself. Bars are scaled, then rounded.
import { medianAbsoluteDeviation, probit } from "simple-statistics";
import { momentum12m1 } from "../../pipeline/ratings/price-factors.ts";
import type { Calendar } from "./calendar.ts";
import { type PricePanel, roundPrice } from "./prices.ts";

/** The Pearson correlation of normal scores that gives Spearman rank correlation `ic`. */
/** A normal variable's standard deviation per unit of median absolute deviation. */
const MAD_TO_SD = 1.4826;

export const pearsonOfSpearman = (ic: number) => 2 * Math.sin((Math.PI * ic) / 6);

/** Plants the link in `panel` in place; returns the months it was planted in. */
export function plantMomentumSignal(panel: PricePanel, cal: Calendar, ic: number): number {
  if (!(Math.abs(ic) < 1)) throw new Error("plant-ic must be between -1 and 1");
  const rho = pearsonOfSpearman(ic);
  const n = cal.dates.length;
  const stocks = panel.close.length;
  // the log adjustment every stock carries into the month being planted
  const carried = new Float64Array(stocks);
  const starts = [...cal.monthStarts, n - 1];
  let planted = 0;
  for (let k = 0; k + 1 < starts.length; k++) {
    const [m, next] = [starts[k], starts[k + 1]];
    const z = monthScores(panel.close, m, next);
    // the month's unplanted log returns (close on m carries the earlier months' adjustment)
    const moves = [...z.keys()].map((i) => Math.log(panel.close[i][next] / panel.close[i][m]) + carried[i]);
    const sigma = moves.length > 2 ? MAD_TO_SD * medianAbsoluteDeviation(moves) : 0;
    const a = sigma > 0 ? (sigma * rho) / Math.sqrt(1 - rho * rho) : 0;
    if (a !== 0) planted++;
    for (let i = 0; i < stocks; i++) {
      const drift = a * (z.get(i) ?? 0);
      for (let t = m + 1; t <= next; t++) scaleBar(panel, i, t, carried[i] + (drift * (t - m)) / (next - m));
      carried[i] += drift;
    }
  }
  return planted;
}

/** Normal scores of the momentum of the stocks trading on `m` and on `next` that have one. */
function monthScores(close: Float64Array[], m: number, next: number): Map<number, number> {
  const mom: [number, number][] = [];
  close.forEach((c, i) => {
    const x = momentum12m1(c, m);
    if (Number.isFinite(x) && c[m] > 0 && c[next] > 0) mom.push([x, i]);
  });
  mom.sort((p, q) => p[0] - q[0] || p[1] - q[1]);
  return new Map(mom.map(([, i], r) => [i, probit((r + 0.5) / mom.length)]));
}

/** Multiplies day t's bar of stock i by e^x (a day it does not trade stays NaN). */
function scaleBar(panel: PricePanel, i: number, t: number, x: number): void {
  if (x === 0 || Number.isNaN(panel.close[i][t])) return;
  const f = Math.exp(x);
  const close = roundPrice(panel.close[i][t] * f);
  const open = roundPrice(panel.open[i][t] * f);
  const dec = close < 1 ? 10000 : 100;
  panel.close[i][t] = close;
  panel.open[i][t] = open;
  panel.high[i][t] = Math.round(Math.max(roundPrice(panel.high[i][t] * f), open, close) * dec) / dec;
  panel.low[i][t] = Math.round(Math.min(roundPrice(panel.low[i][t] * f), open, close) * dec) / dec;
}
