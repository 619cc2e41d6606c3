// Ratings computed from prices (no vendor file): percentile scores by hand, and no look-ahead.
import { describe, expect, it } from "vitest";
import { computeRatings, percentileScores } from "../../pipeline/ratings/computed.ts";
import type { Company, PricePanel } from "../../pipeline/types.ts";

describe("percentileScores", () => {
  it("spreads ranks over 0..10 with ties sharing their mean rank", () => {
    // Sorted ascending: 1 (rank 0), 2 and 2 (ranks 1, 2 → 1.5), 5 (rank 3); score = 10 × rank / 3.
    expect(percentileScores([5, 2, 1, 2])).toEqual([10, 5, 0, 5]);
    expect(percentileScores([5, 2, 1, 2], false)).toEqual([0, 5, 10, 5]);
    expect(percentileScores([NaN, 3])).toEqual([NaN, 5]);
  });
});

describe("computeRatings", () => {
  const dates: string[] = [];
  for (let m = 0; m < 4; m++) for (let d = 1; d <= 28; d++) dates.push(`2024-0${m + 1}-${String(d).padStart(2, "0")}`);
  const up = Float64Array.from(dates, (_, i) => 100 * 1.01 ** i);
  const down = Float64Array.from(dates, (_, i) => 100 * 0.99 ** i);
  const panel: PricePanel = { dates, tickers: ["DN", "UP"], close: [down, up] };
  const co = (ticker: string, sector: string): Company => ({
    id: ticker,
    ticker,
    name: ticker,
    sector,
    sectorId: 1,
    industry: sector,
    industryId: 1,
    sharesOutstanding: null,
    marketCap: null,
  });
  const rows = computeRatings(panel, [co("DN", "A"), co("UP", "B")]);

  it("rates monthly once 21 priced days exist, on the first trading date of the month", () => {
    expect([...new Set(rows.map((r) => r.date))]).toEqual(["2024-02-01", "2024-03-01", "2024-04-01"]);
  });

  it("ranks the rising stock above the falling one, with 4-decimal values in 0..10", () => {
    const feb = rows.filter((r) => r.date === "2024-02-01");
    const [dn, up] = feb;
    expect(up.return_rating).toBe(10);
    expect(dn.return_rating).toBe(0);
    expect(up.macro_rating).toBe(10); // sector B beats sector A
    for (const r of rows)
      for (const v of [r.total_rating, r.return_rating, r.risk_rating]) expect(Math.round(v * 1e4) / 1e4).toBe(v);
  });

  it("uses no future prices: truncating the panel after a date leaves that date's ratings unchanged", () => {
    const cut = dates.indexOf("2024-03-01") + 1;
    const early = computeRatings(
      { dates: dates.slice(0, cut), tickers: panel.tickers, close: panel.close.map((c) => c.slice(0, cut)) },
      [co("DN", "A"), co("UP", "B")],
    );
    expect(early.filter((r) => r.date === "2024-03-01")).toEqual(rows.filter((r) => r.date === "2024-03-01"));
  });
});
