// portfolios.json: the predefined portfolios (rule fields of the Portfolio resource) and benchmarks.
export const BENCHMARK_SERIES = "SP500-SIM";

export interface PortfolioDef {
  id: string;
  name: string;
  description: string;
  rebalanceFrequency: number;
  maxStocks: number;
  maxStocksCriteria: string;
  maxStocksCriteriaOrder: "descending" | "ascending";
  maxSectorConcentration?: string;
  ranges: Record<string, [number, number]>;
}

export const PORTFOLIOS: PortfolioDef[] = [
  {
    id: "101",
    name: "Momentum Leaders",
    description: "Strong twelve-month returns confirmed by price above its 200-day average; rebalanced monthly.",
    rebalanceFrequency: 1,
    maxStocks: 20,
    maxStocksCriteria: "total_rating",
    maxStocksCriteriaOrder: "descending",
    maxSectorConcentration: "0.30",
    ranges: { returnRating: [7, 10], technicalRating: [5, 10] },
  },
  {
    id: "102",
    name: "Quality Growth",
    description: "Growing revenue with moderate risk; rebalanced quarterly.",
    rebalanceFrequency: 3,
    maxStocks: 30,
    maxStocksCriteria: "total_rating",
    maxStocksCriteriaOrder: "descending",
    maxSectorConcentration: "0.25",
    ranges: { growthRating: [6, 10], riskRating: [4, 10] },
  },
  {
    id: "103",
    name: "Deep Value",
    description: "The highest earnings yields; rebalanced every six months.",
    rebalanceFrequency: 6,
    maxStocks: 25,
    maxStocksCriteria: "total_rating",
    maxStocksCriteriaOrder: "descending",
    ranges: { valuationRating: [7, 10] },
  },
  {
    id: "104",
    name: "Low Volatility",
    description: "The calmest stocks, spread across sectors; rebalanced yearly.",
    rebalanceFrequency: 12,
    maxStocks: 40,
    maxStocksCriteria: "total_rating",
    maxStocksCriteriaOrder: "descending",
    maxSectorConcentration: "0.20",
    ranges: { riskRating: [6, 10] },
  },
  {
    id: "105",
    name: "Contrarian Rebound",
    description: "Reasonably valued laggards: the weakest twelve-month returns first; rebalanced quarterly.",
    rebalanceFrequency: 3,
    maxStocks: 10,
    maxStocksCriteria: "return_rating",
    maxStocksCriteriaOrder: "ascending",
    ranges: { valuationRating: [5, 10], riskRating: [3, 10] },
  },
  {
    id: "106",
    name: "Balanced Core",
    description: "Above-average total rating in sectors with supportive momentum; rebalanced monthly.",
    rebalanceFrequency: 1,
    maxStocks: 50,
    maxStocksCriteria: "total_rating",
    maxStocksCriteriaOrder: "descending",
    maxSectorConcentration: "0.30",
    ranges: { totalRating: [5, 10], macroRating: [3, 10] },
  },
];

export const BENCHMARKS = [
  {
    id: "1",
    name: "S&P 500 (simulated)",
    description: "Cap-weighted index of the simulated universe (price index, no dividends).",
    rebalanceFrequency: 0,
    series: BENCHMARK_SERIES,
  },
  {
    id: "2",
    name: "Equal Weight",
    description: "Every rated stock in equal weight, rebalanced monthly.",
    rebalanceFrequency: 1,
    maxStocks: 1000,
    maxStocksCriteria: "total_rating",
    maxStocksCriteriaOrder: "descending",
    ranges: {},
  },
];

export function portfoliosJson(): string {
  return `${JSON.stringify({ portfolios: PORTFOLIOS, benchmarks: BENCHMARKS }, null, 2)}\n`;
}
