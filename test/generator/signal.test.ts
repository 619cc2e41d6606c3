// The planted signal (generate --plant-ic): the month-start 12-1 momentum's rank correlation with
// the return to the next month start comes out at the planted IC, within its standard error; and
// the default sample writes no ratings.csv (the pipeline rates it with its factor model).
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mean, sampleRankCorrelation, sampleStandardDeviation } from "simple-statistics";
import { afterAll, describe, expect, it } from "vitest";
import { generateSample } from "../../data/generate.ts";
import { buildCalendar, END_YEAR } from "../../data/generator/calendar.ts";
import { buildCompanies } from "../../data/generator/companies.ts";
import { simulatePrices } from "../../data/generator/prices.ts";
import { pearsonOfSpearman, plantMomentumSignal } from "../../data/generator/signal.ts";
import { momentum12m1 } from "../../pipeline/ratings/price-factors.ts";

const root = mkdtempSync(join(tmpdir(), "gen-signal-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Each month's Spearman IC of momentum on its first trading date against the return to the next. */
function monthlyIcs(close: Float64Array[], starts: number[]): number[] {
  const out: number[] = [];
  for (let k = 0; k + 1 < starts.length; k++) {
    const [m, next] = [starts[k], starts[k + 1]];
    const pairs = close
      .map((c) => [momentum12m1(c, m), c[next] / c[m] - 1])
      .filter(([x, r]) => Number.isFinite(x) && Number.isFinite(r));
    if (pairs.length >= 20)
      out.push(
        sampleRankCorrelation(
          pairs.map((p) => p[0]),
          pairs.map((p) => p[1]),
        ),
      );
  }
  return out;
}

function sample(ic?: number) {
  const cal = buildCalendar(END_YEAR - 7);
  const companies = buildCompanies(5, 300, cal);
  const panel = simulatePrices(5, cal, companies);
  if (ic !== undefined) plantMomentumSignal(panel, cal, ic);
  return monthlyIcs(panel.close, cal.monthStarts);
}

describe("the planted momentum signal", () => {
  it("converts a Spearman IC to the Pearson correlation of normal scores", () => {
    // Spearman = (6/π) asin(ρ/2) for a bivariate normal (Kendall and Gibbons): ρ = 2 sin(π·0.3/6) = 0.31287
    expect(pearsonOfSpearman(0.3)).toBeCloseTo(0.31287, 5);
    expect(pearsonOfSpearman(0)).toBe(0);
  });

  it("adds the planted IC to the simulation's own, within two standard errors", () => {
    const base = sample();
    const planted = sample(0.3);
    const diff = planted.map((x, k) => x - base[k]);
    const se = sampleStandardDeviation(diff) / Math.sqrt(diff.length);
    expect(planted.length).toBeGreaterThan(60);
    // measured: base 0.0040, planted 0.2982, se 0.0058 over 83 months (seed 5, 300 companies, 8 years)
    expect(Math.abs(mean(planted) - 0.3 - mean(base))).toBeLessThan(2 * se);
    expect(mean(planted)).toBeGreaterThan(0.2);
  });

  it("rejects an IC outside (-1, 1)", async () => {
    await expect(generateSample(join(root, "bad"), { companies: 20, years: 2, plantIc: 1 })).rejects.toThrow(
      /plant-ic/,
    );
  });
});

describe("ratings.csv", () => {
  it("is left out by default and written with vendorRatings", async () => {
    const a = await generateSample(join(root, "model"), { companies: 20, years: 2 });
    const b = await generateSample(join(root, "vendor"), { companies: 20, years: 2, vendorRatings: true });
    expect(a.files).not.toContain("ratings.csv");
    expect(existsSync(join(a.outDir, "ratings.csv"))).toBe(false);
    expect(b.files).toContain("ratings.csv");
  });
});
