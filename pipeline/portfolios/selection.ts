// Selection on a rebalance date (contract §5): priced that day, every constrained rating within
// its range (bounds inclusive), ranked by the criteria (ties by ticker), sector cap applied in
// rank order, until maxStocks.
import { RATING_NAMES, type HoldingRow, type PortfolioRules, type RatingRow } from "../types.ts";
import { tradingIndexOnOrAfter, type Universe } from "./universe.ts";

export function sectorCap(rules: Pick<PortfolioRules, "maxSectorConcentration" | "maxStocks">): number {
  const c = rules.maxSectorConcentration;
  return c === null || c >= 1 ? Infinity : Math.floor(c * rules.maxStocks);
}

function inRanges(r: RatingRow, rules: PortfolioRules): boolean {
  for (const [name, bounds] of Object.entries(rules.ranges)) {
    const v = r[name as keyof RatingRow] as number;
    if (!bounds || !(v >= bounds[0] && v <= bounds[1])) return false;
  }
  return true;
}

/** Selection on trading day `d` of the universe; holdings ordered by ticker. */
export function selectOnDay(d: number, rules: PortfolioRules, u: Universe): HoldingRow[] {
  const k = u.asOfRating[d];
  if (k < 0) return [];
  const ratings = u.ratingsByDate.get(u.ratingDates[k])!;
  const date = u.panel.dates[d];
  const candidates: { row: RatingRow; key: number; price: number }[] = [];
  for (const row of ratings.values()) {
    const i = u.tickerIndex.get(row.ticker);
    if (i === undefined) continue;
    const price = u.panel.close[i][d];
    if (Number.isNaN(price) || !inRanges(row, rules)) continue;
    const key = rules.maxStocksCriteria === "market_cap" ? (u.companies.get(row.ticker)?.marketCap ?? NaN) : row[rules.maxStocksCriteria];
    candidates.push({ row, key, price });
  }
  const sign = rules.maxStocksCriteriaOrder === "ascending" ? 1 : -1;
  candidates.sort((a, b) => {
    // A missing criteria value (unknown market cap) ranks last in either order.
    const an = Number.isNaN(a.key), bn = Number.isNaN(b.key);
    if (an !== bn) return an ? 1 : -1;
    if (!an && a.key !== b.key) return sign * (a.key - b.key);
    return a.row.ticker < b.row.ticker ? -1 : a.row.ticker > b.row.ticker ? 1 : 0;
  });
  const cap = sectorCap(rules);
  const perSector = new Map<string, number>();
  const picked: HoldingRow[] = [];
  for (const c of candidates) {
    if (picked.length >= rules.maxStocks) break;
    const sector = u.companies.get(c.row.ticker)?.sector ?? "";
    const n = perSector.get(sector) ?? 0;
    if (n >= cap) continue;
    perSector.set(sector, n + 1);
    const h = { date, ticker: c.row.ticker, price: c.price } as HoldingRow;
    for (const name of RATING_NAMES) h[name] = c.row[name];
    picked.push(h);
  }
  return picked.sort((a, b) => (a.ticker < b.ticker ? -1 : 1));
}

/** Selection on `date` (must be a trading date of the universe, else the next one is used). */
export function selectOn(date: string, rules: PortfolioRules, u: Universe): HoldingRow[] {
  const d = tradingIndexOnOrAfter(u.panel.dates, date);
  return d < u.panel.dates.length ? selectOnDay(d, rules, u) : [];
}
