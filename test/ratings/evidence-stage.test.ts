// The evidence step over tables written here (pipeline/stages/evidence.ts computeEvidence): the
// ratings rounded to four decimals as served, the forward dates on the calendar, a stock without a
// close at D_h left out, fewer than 20 stocks not evaluated, and the 12-1 momentum baseline; the
// numbers worked out below.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { RatingEvidence } from "../../pipeline/ratings/evidence.ts";
import { computeEvidence } from "../../pipeline/stages/evidence.ts";
import { openDuck } from "../../pipeline/store/duck/duck.ts";
import { appendTable } from "../../pipeline/store/duck/write.ts";
import { RATING_NAMES } from "../../pipeline/types.ts";

// Every weekday from 2019-01-01 to 2020-06-30; 20 stocks T00..T19, stock k closing at
// 100 · (1 + 0.0001 (k + 1))^i on the i-th date: every return over any window rises with k.
const calendar: string[] = [];
for (let t = Date.UTC(2019, 0, 1); t <= Date.UTC(2020, 5, 30); t += 86_400_000)
  if (new Date(t).getUTCDay() % 6 !== 0) calendar.push(new Date(t).toISOString().slice(0, 10));
const tickers = Array.from({ length: 20 }, (_, k) => `T${String(k).padStart(2, "0")}`);
// T19 has no close on 2020-05-04, the 3-month forward date of 2020-02-03 (2020-05-03 is a Sunday)
const gap = (k: number, d: string) => k === 19 && d === "2020-05-04";

// Ratings on 2020-02-03: total ⌊k/2⌋ + 0.00004 (k odd), which is ⌊k/2⌋ once rounded to four decimals:
// ten tied pairs. Against returns ranked 0..19, rank deviations x: 2j − 9 for both stocks of pair j,
// y: 2j − 9.5 and 2j − 8.5. Σxy = Σ 2 (2j − 9)² = 2 · 330 = 660 (j = 0..9: 81 + 49 + 25 + 9 + 1 twice),
// Σx² = 660, Σy² = Σ (i − 9.5)² = 665: ic = 660 / √(660 · 665) = √(660 / 665). Unrounded, it would be 1.
// On 2020-03-02 the same pairs reversed: ic = −√(660 / 665).
const rating = (date: string, k: number) =>
  (date === "2020-02-03" ? Math.floor(k / 2) : Math.floor((19 - k) / 2)) + (k % 2 ? 0.00004 : 0);
const IC = Math.sqrt(660 / 665);

let rows: RatingEvidence[];
beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), "evidence-stage-"));
  const db = await openDuck();
  try {
    const c = db.conn;
    const prices = tickers.flatMap((t, k) =>
      calendar.flatMap((d, i) => (gap(k, d) ? [] : [[d, t, 100 * (1 + 0.0001 * (k + 1)) ** i]])),
    );
    await appendTable(
      c,
      "p",
      [
        ["date", "date"],
        ["ticker", "varchar"],
        ["close", "double"],
      ],
      prices,
    );
    await c.run("copy (select date::date date, ticker, close from p) to $f (format parquet)", {
      f: join(dir, "prices.parquet"),
    });
    const ratings = ["2020-02-03", "2020-03-02"].flatMap((d) =>
      tickers.map((t, k) => [d, t, ...RATING_NAMES.map(() => rating(d, k))]),
    );
    const cols = RATING_NAMES.map((n): [string, "double"] => [n, "double"]);
    await appendTable(c, "r", [["date", "date"], ["ticker", "varchar"], ...cols], ratings);
    await c.run("copy (select * replace (date::date as date) from r) to $f (format parquet)", {
      f: join(dir, "ratings.parquet"),
    });
    rows = await computeEvidence(c, dir);
  } finally {
    db.close();
  }
});

const row = (rating: string, horizon: number) => rows.find((r) => r.rating === rating && r.horizon === horizon)!;

describe("the evidence step on hand-made tables", () => {
  it("ranks the ratings as served (four decimals), on both dates of the one-month horizon", () => {
    const r = row("total_rating", 1);
    expect(r.ic.map((p) => p.date)).toEqual(["2020-02-03", "2020-03-02"]);
    expect(r.ic[0].ic).toBeCloseTo(IC, 12);
    expect(r.ic[1].ic).toBeCloseTo(-IC, 12);
    expect(r.ic.map((p) => p.stocks)).toEqual([20, 20]);
    expect(r.meanIc).toBeCloseTo(0, 12);
    expect(r.hitRate).toBe(0.5);
    // top quintile: positions 16..19 by rating then ticker: T16..T19, then T00..T03, all new
    expect(r.topTurnover).toBe(1);
  });

  it("leaves out a stock without a close at D_h, and a date left with 19 stocks", () => {
    // 2020-02-03 + 3 months: T19 has no close on 2020-05-04; 2020-03-02 + 3 months = 2020-06-02
    expect(row("total_rating", 3).ic.map((p) => [p.date, p.stocks])).toEqual([["2020-03-02", 20]]);
    // + 6 months is past the calendar for both dates
    expect(row("total_rating", 6)).toMatchObject({ dates: 0, meanIc: null, quintileReturns: [], ic: [] });
  });

  it("evaluates 12-1 momentum like a rating: here it orders the stocks exactly as their returns", () => {
    // close(D − 21) / close(D − 252) − 1 = (1 + g_k)^231 − 1 rises with k, as every forward return
    const m = row("momentum_12_1_baseline", 1);
    expect(m.ic.map((p) => [p.date, p.ic, p.stocks])).toEqual([
      ["2020-02-03", expect.closeTo(1, 12), 20],
      ["2020-03-02", expect.closeTo(1, 12), 20],
    ]);
    const q = m.quintileReturns;
    expect(q).toHaveLength(5);
    expect(q.every((v, i) => i === 0 || v > q[i - 1])).toBe(true);
    expect(m.spread).toBeCloseTo(q[4] - q[0], 15);
    // the same top quintile both dates: no turnover
    expect(m.topTurnover).toBe(0);
  });
});
