// Trade instructions for a cash amount (contract §5): equal targets, whole shares rounded half
// up (or 6-decimal fractions), value in cents, pct of the portfolio value. A stock whose one
// share costs more than its target gets quantity 0 and is still listed.
import type { Company, HoldingRow } from "../types.ts";

export interface TradeRow {
  date: string;
  id: number;
  ticker: string;
  name: string;
  price: number;
  quantity: number;
  value: number;
  pct: number;
  order_type: "Buy";
}

export function computeTrades(input: { holdings: HoldingRow[]; companies: Map<string, Company>; value: number; allowFractional: boolean }): TradeRow[] {
  const { holdings, companies, value, allowFractional } = input;
  const n = holdings.length;
  return [...holdings]
    .sort((a, b) => (a.ticker < b.ticker ? -1 : 1))
    .map((h) => {
      const target = value / n;
      const units = target / h.price;
      // Whole shares: a share dearer than the target buys none, even where rounding would give 1.
      const quantity = allowFractional ? Math.round(units * 1e6) / 1e6 : h.price > target ? 0 : Math.floor(units + 0.5);
      const cost = Math.round(quantity * h.price * 100) / 100;
      const c = companies.get(h.ticker);
      return { date: h.date, id: Number(c?.id), ticker: h.ticker, name: c?.name ?? h.ticker, price: h.price, quantity, value: cost, pct: cost / value, order_type: "Buy" as const };
    });
}
