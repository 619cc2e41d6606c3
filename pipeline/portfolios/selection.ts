// Selection on a rebalance date (contract §5): priced that day, every constrained rating within
// its range (bounds inclusive), ranked by the criteria (ties by ticker), sector cap applied in
// rank order, until maxStocks.
import { type HoldingRow, type PortfolioRules, RATING_NAMES, type RatingName } from "../types.ts";
import { rankedPositions, tradingIndexOnOrAfter, type Universe } from "./universe.ts";

/** Names one sector may hold: floor(maxSectorConcentration × maxStocks); Infinity when uncapped. */
export function sectorCap(rules: Pick<PortfolioRules, "maxSectorConcentration" | "maxStocks">): number {
  const c = rules.maxSectorConcentration;
  if (c === null || c === undefined || c >= 1) return Infinity;
  // The epsilon keeps binary fractions from flooring a whole product down: 0.29 × 100 is
  // 28.999999999999996 in doubles, and the cap meant is 29.
  return Math.floor(c * rules.maxStocks + 1e-9);
}

/** The constrained ranges as parallel arrays, so the per-stock test is a tight loop. */
function compileRanges(rules: PortfolioRules): { names: RatingName[]; lo: number[]; hi: number[] } {
  const names: RatingName[] = [];
  const lo: number[] = [];
  const hi: number[] = [];
  for (const name of RATING_NAMES) {
    const b = rules.ranges[name];
    if (!b) continue; // an absent (or explicitly undefined) range does not constrain
    names.push(name);
    lo.push(b[0]);
    hi.push(b[1]);
  }
  return { names, lo, hi };
}

/** Selection on trading day `d` of the universe, with the ratings as of that day; ordered by ticker. */
export function selectOnDay(d: number, rules: PortfolioRules, u: Universe): HoldingRow[] {
  const k = u.asOfRating[d];
  if (k < 0 || rules.maxStocks <= 0) return [];
  const s = u.slices[k];
  const close = u.panel.close;
  const ranges = compileRanges(rules);
  const cols = ranges.names.map((n) => s.values[n]);
  const cap = sectorCap(rules);
  const perSector = new Int32Array(u.sectorCount);
  const picked: number[] = [];
  // Walk the slice in rank order, taking what is priced that day, inside every range and under
  // its sector's cap, until maxStocks.
  const order = rankedPositions(s, rules.maxStocksCriteria, rules.maxStocksCriteriaOrder === "ascending");
  walk: for (let i = 0; i < order.length && picked.length < rules.maxStocks; i++) {
    const j = order[i];
    const row = s.panelRow[j];
    if (row < 0) continue;
    const px = close[row][d];
    if (Number.isNaN(px)) continue; // no price that day
    for (let c = 0; c < cols.length; c++) {
      const v = cols[c][j];
      if (!(v >= ranges.lo[c] && v <= ranges.hi[c])) continue walk; // NaN (unrated) fails any range
    }
    if (perSector[s.sector[j]] >= cap) continue;
    perSector[s.sector[j]]++;
    picked.push(j);
  }
  const date = u.panel.dates[d];
  return picked
    .sort((a, b) => a - b)
    .map((j) => {
      const r = s.rows[j];
      // One literal, so every holding shares one object shape.
      return {
        date,
        ticker: r.ticker,
        price: close[s.panelRow[j]][d],
        total_rating: r.total_rating,
        return_rating: r.return_rating,
        growth_rating: r.growth_rating,
        risk_rating: r.risk_rating,
        valuation_rating: r.valuation_rating,
        technical_rating: r.technical_rating,
        macro_rating: r.macro_rating,
      };
    });
}

/** Selection on `date`: a trading date of the universe, else the first one after it ([] past the end). */
export function selectOn(date: string, rules: PortfolioRules, u: Universe): HoldingRow[] {
  const d = tradingIndexOnOrAfter(u.panel.dates, date);
  return d < u.panel.dates.length ? selectOnDay(d, rules, u) : [];
}
