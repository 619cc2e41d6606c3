// Piotroski F-Score (Piotroski 2000, "Value Investing: The Use of Historical Financial Statement
// Information to Separate Winners from Losers"): nine binary signals, one point each, comparing a
// period with the same kind of period one year earlier. Formulas: docs/financials.md.

export interface FScoreInputs {
  netIncome: number | null;
  operatingCashFlow: number | null;
  totalAssets: number | null;
  longTermDebt: number | null;
  currentAssets: number | null;
  currentLiabilities: number | null;
  sharesBasic: number | null;
  grossProfit: number | null;
  revenue: number | null;
}

/** The score 0..9, or null when an input of either period is missing or a denominator is zero. */
export function piotroskiFScore(cur: FScoreInputs, prior: FScoreInputs | undefined): number | null {
  if (!prior) return null;
  const c = ratios(cur);
  const p = ratios(prior);
  if (!c || !p || cur.operatingCashFlow === null) return null;
  const ni = cur.netIncome!;
  const cfo = cur.operatingCashFlow;
  const signals = [
    ni > 0, // ROA > 0 (assets are positive)
    cfo > 0, // CFO > 0
    c.roa > p.roa, // ΔROA > 0
    cfo > ni, // ACCRUAL: CFO beats earnings
    c.leverage <= p.leverage, // ΔLEVER: leverage did not rise
    c.currentRatio > p.currentRatio, // ΔLIQUID
    cur.sharesBasic! <= prior.sharesBasic!, // EQ_OFFER: no new common shares
    c.grossMargin > p.grossMargin, // ΔMARGIN
    c.turnover > p.turnover, // ΔTURN
  ];
  return signals.filter(Boolean).length;
}

function ratios(x: FScoreInputs) {
  const { netIncome, totalAssets, longTermDebt, currentAssets, currentLiabilities, sharesBasic, grossProfit, revenue } =
    x;
  if (netIncome === null || totalAssets === null || longTermDebt === null || currentAssets === null) return null;
  if (currentLiabilities === null || sharesBasic === null || grossProfit === null || revenue === null) return null;
  if (totalAssets <= 0 || currentLiabilities === 0 || revenue === 0) return null;
  return {
    roa: netIncome / totalAssets,
    leverage: longTermDebt / totalAssets,
    currentRatio: currentAssets / currentLiabilities,
    grossMargin: grossProfit / revenue,
    turnover: revenue / totalAssets,
  };
}
