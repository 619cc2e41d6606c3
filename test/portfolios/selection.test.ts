import { describe, expect, it } from "vitest";
import { buildUniverse, rankedPositions, sectorCap, selectOn } from "../../pipeline/portfolios/index.ts";
import type { HoldingRow } from "../../pipeline/types.ts";
import { AUTUMN, autumnRules, rules, universeOf, WINTER } from "./universe-fixture.ts";

const tickers = (h: HoldingRow[]) => h.map((x) => x.ticker);

describe("universe", () => {
  it("maps each trading day to the latest rating date on or before it", () => {
    const u = universeOf(AUTUMN);
    expect(u.ratingDates).toEqual(["2024-08-31", "2024-09-30", "2024-10-31"]);
    // 2 Sep, 16 Sep → 31 Aug; 30 Sep, 15 Oct → 30 Sep; 31 Oct onwards → 31 Oct.
    expect([...u.asOfRating]).toEqual([0, 0, 1, 1, 2, 2, 2]);
    expect(u.tickerIndex.get("S")).toBe(3);
    const early = buildUniverse({ dates: ["2024-01-01"], tickers: [], close: [] }, [], []);
    expect([...early.asOfRating]).toEqual([-1]);
  });
});

describe("selection (winter)", () => {
  const u = universeOf(WINTER);
  it("ranks by the criteria with ties by ticker", () => {
    // 31 Jan totals: A 9, B 8, C 8, D 5 → A, then B before C on the tie.
    expect(tickers(selectOn("2024-01-31", rules(), u))).toEqual(["A", "B"]);
    // Ascending: D 5, then B/C tie at 8 → B.
    expect(tickers(selectOn("2024-01-31", rules({ maxStocksCriteriaOrder: "ascending" }), u))).toEqual(["B", "D"]);
  });
  it("applies the sector cap floor(0.5 × 2) = 1 in rank order", () => {
    // A (Tech) taken, B (Tech) skipped, C (Energy) taken.
    expect(tickers(selectOn("2024-01-31", rules({ maxSectorConcentration: 0.5 }), u))).toEqual(["A", "C"]);
    expect(tickers(selectOn("2024-01-31", rules({ maxSectorConcentration: 1 }), u))).toEqual(["A", "B"]);
  });
  it("keeps only stocks inside every range, bounds inclusive", () => {
    // return_rating = total − 1 on 31 Jan: A 8, B 7, C 7, D 4; [7, 7.5] keeps B and C.
    expect(tickers(selectOn("2024-01-31", rules({ ranges: { return_rating: [7, 7.5] }, maxStocks: 5 }), u))).toEqual([
      "B",
      "C",
    ]);
    // A second range: total in [8, 8] as well still keeps B and C; total [9, 10] keeps none of them.
    expect(
      tickers(
        selectOn("2024-01-31", rules({ ranges: { return_rating: [7, 7.5], total_rating: [8, 8] }, maxStocks: 5 }), u),
      ),
    ).toEqual(["B", "C"]);
    expect(selectOn("2024-01-31", rules({ ranges: { return_rating: [7, 7.5], total_rating: [9, 10] } }), u)).toEqual(
      [],
    );
    // A range key present but undefined does not constrain: same as no ranges.
    expect(tickers(selectOn("2024-01-31", rules({ ranges: { growth_rating: undefined } }), u))).toEqual(["A", "B"]);
  });
  it("ranks by market cap, unknown caps last", () => {
    // Caps: A 4e9, D 2e9, B 1e9, C unknown.
    expect(tickers(selectOn("2024-01-31", rules({ maxStocksCriteria: "market_cap", maxStocks: 2 }), u))).toEqual([
      "A",
      "D",
    ]);
    expect(
      tickers(
        selectOn(
          "2024-01-31",
          rules({ maxStocksCriteria: "market_cap", maxStocksCriteriaOrder: "ascending", maxStocks: 2 }),
          u,
        ),
      ),
    ).toEqual(["B", "D"]);
    // Three by cap either way: C (unknown) is last in both orders, so never reached.
    expect(
      tickers(
        selectOn(
          "2024-01-31",
          rules({ maxStocksCriteria: "market_cap", maxStocksCriteriaOrder: "ascending", maxStocks: 3 }),
          u,
        ),
      ),
    ).toEqual(["A", "B", "D"]);
  });
  it("ranks by another rating, ascending", () => {
    // return_rating on 29 Feb = total − 1: A 4, B 8, C 2, D 8 → C, A.
    expect(
      tickers(
        selectOn("2024-02-29", rules({ maxStocksCriteria: "return_rating", maxStocksCriteriaOrder: "ascending" }), u),
      ),
    ).toEqual(["A", "C"]);
  });
  it("uses the ratings as of the date and requires a close that day", () => {
    // 4 Mar uses the 29 Feb ratings (A 5, B 9, C 3, D 9); ascending: C, then A has no price → B.
    expect(tickers(selectOn("2024-03-04", rules({ maxStocksCriteriaOrder: "ascending" }), u))).toEqual(["B", "C"]);
  });
});

describe("selection (autumn: ranges, sector cap 2, ties)", () => {
  const u = universeOf(AUTUMN);
  it("selects each rebalance date by hand", () => {
    // 2 Sep, ratings of 31 Aug: T's risk 9 is outside [2, 8]; ranked P 9, Q 8, R 7, S 6;
    // Tech holds P and Q (cap 2), so R is skipped and S taken.
    expect(tickers(selectOn("2024-09-02", autumnRules(), u))).toEqual(["P", "Q", "S"]);
    // 30 Sep: S has no price; R's risk 2 and T's risk 8 sit on the bounds (inclusive);
    // ranked Q 9, R 9 (tie by ticker), T 8, P 4 → Q, R, T.
    const sep = selectOn("2024-09-30", autumnRules(), u);
    expect(tickers(sep)).toEqual(["Q", "R", "T"]);
    expect(sep[1]).toMatchObject({
      date: "2024-09-30",
      ticker: "R",
      price: 40,
      total_rating: 9,
      risk_rating: 2,
      growth_rating: 5,
    });
    // 31 Oct: P, Q, R tie at 9 (Tech): P, Q taken by ticker, R skipped on the cap; T (1) fills.
    expect(tickers(selectOn("2024-10-31", autumnRules(), u))).toEqual(["P", "Q", "T"]);
    // Without the cap the tie alone decides: P, Q, R.
    expect(tickers(selectOn("2024-10-31", autumnRules({ maxSectorConcentration: null }), u))).toEqual(["P", "Q", "R"]);
  });
  it("selects for rebalance_period=today: the latest date with the latest ratings and its closes", () => {
    // 29 Nov with the 31 Oct ratings: same ranking as 31 Oct; closes P 12, Q 30, T 9.
    const today = selectOn("2024-11-29", autumnRules(), u);
    expect(today.map((h) => [h.date, h.ticker, h.price, h.total_rating])).toEqual([
      ["2024-11-29", "P", 12, 9],
      ["2024-11-29", "Q", 30, 9],
      ["2024-11-29", "T", 9, 1],
    ]);
  });
  it("moves a date that is not a trading date forward, ratings included", () => {
    // 1 Oct → 15 Oct (ratings of 30 Sep): Q, R, T at 24, 50, 10; past the data → none.
    expect(selectOn("2024-10-01", autumnRules(), u).map((h) => [h.ticker, h.price])).toEqual([
      ["Q", 24],
      ["R", 50],
      ["T", 10],
    ]);
    expect(selectOn("2024-12-02", autumnRules(), u)).toEqual([]);
  });
});

describe("sector cap", () => {
  it("floors the product, without binary-fraction surprises", () => {
    expect(sectorCap({ maxSectorConcentration: 0.5, maxStocks: 2 })).toBe(1);
    expect(sectorCap({ maxSectorConcentration: 0.67, maxStocks: 3 })).toBe(2); // 2.01
    expect(sectorCap({ maxSectorConcentration: 0.29, maxStocks: 100 })).toBe(29); // 28.999999999999996 in doubles
    expect(sectorCap({ maxSectorConcentration: 1, maxStocks: 5 })).toBe(Infinity);
    expect(sectorCap({ maxSectorConcentration: null, maxStocks: 5 })).toBe(Infinity);
  });
  it("admits nothing when the cap floors to 0", () => {
    // floor(0.1 × 5) = 0.
    expect(selectOn("2024-01-31", rules({ maxSectorConcentration: 0.1, maxStocks: 5 }), universeOf(WINTER))).toEqual(
      [],
    );
  });
});

describe("rankedPositions", () => {
  // One rating date, six tickers K0..K5 (already in ticker order); total_rating 3, NaN, 7, 3, 9, 7.
  const spec = {
    dates: ["2024-01-31"],
    closes: Object.fromEntries([0, 1, 2, 3, 4, 5].map((i) => [`K${i}`, [1]])),
    sectors: Object.fromEntries([0, 1, 2, 3, 4, 5].map((i) => [`K${i}`, "S"])),
    caps: { K0: 5e9, K1: null, K2: 1e9, K3: 5e9, K4: null, K5: 2e9 },
    ratings: { "2024-01-31": Object.fromEntries([3, NaN, 7, 3, 9, 7].map((v, i) => [`K${i}`, { total_rating: v }])) },
  };
  const s = universeOf(spec).slices[0];
  it("orders by key, ties by ticker, NaN last, in either direction", () => {
    expect([...rankedPositions(s, "total_rating", false)]).toEqual([4, 2, 5, 0, 3, 1]); // 9, 7, 7, 3, 3, NaN
    expect([...rankedPositions(s, "total_rating", true)]).toEqual([0, 3, 2, 5, 4, 1]); // 3, 3, 7, 7, 9, NaN
    // Caps 5e9, –, 1e9, 5e9, –, 2e9: descending K0, K3 (tie), K5, K2, then the unknown K1, K4.
    expect([...rankedPositions(s, "market_cap", false)]).toEqual([0, 3, 5, 2, 1, 4]);
    expect([...rankedPositions(s, "market_cap", true)]).toEqual([2, 5, 0, 3, 1, 4]);
  });
  it("is computed once per slice, criteria and direction", () => {
    expect(rankedPositions(s, "total_rating", false)).toBe(rankedPositions(s, "total_rating", false));
    expect(s.orders.size).toBe(4);
  });
});
