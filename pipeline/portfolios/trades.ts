// Trade instructions for a cash amount (contract §5): equal targets, whole shares rounded half
// up (or 6-decimal fractions), value in cents, pct of the portfolio value, ordered by ticker.
// A stock whose one share costs more than its target gets quantity 0 and is still listed; that
// rule is about whole shares (fractional shares exist to buy less than one).
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

/**
 * x rounded to `decimals` places, halves up. The scaled value gets a nudge of a few ulps so a
 * decimal half that binary floating point stores just below it still rounds up: 2.675 × 100 is
 * 267.49999999999997 in doubles, and 1.005 × 100 is 100.49999999999999.
 */
export function roundHalfUp(x: number, decimals: number): number {
  const f = 10 ** decimals;
  const s = x * f;
  return Math.floor(s + 0.5 + Math.abs(s) * 1e-12) / f;
}

export function computeTrades(input: {
  holdings: HoldingRow[];
  companies: Map<string, Company>;
  value: number;
  allowFractional: boolean;
}): TradeRow[] {
  const { holdings, companies, value, allowFractional } = input;
  const n = holdings.length;
  if (n === 0) return [];
  const target = value / n;
  return [...holdings]
    .sort((a, b) => (a.ticker < b.ticker ? -1 : a.ticker > b.ticker ? 1 : 0))
    .map((h) => {
      const units = target / h.price;
      const quantity = !(h.price > 0)
        ? 0
        : allowFractional
          ? roundHalfUp(units, 6)
          : h.price > target
            ? 0
            : roundHalfUp(units, 0);
      const cost = roundHalfUp(quantity * h.price, 2);
      const c = companies.get(h.ticker);
      return {
        date: h.date,
        id: Number(c?.id),
        ticker: h.ticker,
        name: c?.name ?? h.ticker,
        price: h.price,
        quantity,
        value: cost,
        pct: cost / value,
        order_type: "Buy" as const,
      };
    });
}
