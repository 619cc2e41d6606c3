// Every metric row against QuantStats 0.0.62. The fixture holds seeded input series and the
// strings `qs.reports.metrics(returns, benchmark, rf=0, mode="full", internal=True)` printed for
// them (QuantStats at git tag 0.0.62, Debian's pandas 1.5.3 / numpy / scipy; see the fixture's
// `producedBy`, `call`, `patches`, `inputs`). Two patches make QuantStats follow the contract where
// 0.0.62 differs from it: CAGR over calendar days / 365, and cVaR without the fallback to VaR
// (computed per column). Only the numbers were committed, not the script or QuantStats' code.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { metricRows } from "../../pipeline/analytics/index.ts";

interface Case {
  name: string;
  dates: string[];
  returns: number[];
  benchmark?: number[];
  columns: string[];
  expected: Record<string, string[]>;
}
const fixture = JSON.parse(readFileSync(join(import.meta.dirname, "fixtures/quantstats-0.0.62.json"), "utf8")) as { cases: Case[] };

/** QuantStats' table keys drop the trailing space and a trailing " %". */
const oracleKey = (label: string) => label.replace(/ %$/, "").trim();

/**
 * Where the contract deliberately differs from what QuantStats prints for an all-zero series:
 * 0.0.62 prints "%" for a max drawdown it never found (we print the 0.0% it is), leaves out the
 * Avg. Drawdown row (the contract lists every row; no drawdown has no average: "-"), and shows
 * Risk of Ruin unscaled (the contract's percent rule multiplies every fraction by 100). And
 * QuantStats re-parses its "{:,.2f}" Cumulative Return below 1,000 as a float ("0.00" → "0.0%");
 * the contract keeps two decimals always ("0.00%"). No other case hits that (their values have
 * two significant decimals or commas).
 */
const CONTRACT_OVERRIDES: Record<string, Record<string, string>> = {
  zeros: { "Max Drawdown": "0.0%", "Risk of Ruin": "100.0%", "Avg. Drawdown": "-", "Cumulative Return": "0.00%" },
};

describe("metric rows match QuantStats 0.0.62", () => {
  for (const c of fixture.cases) {
    it(c.name, () => {
      const subject = { dates: c.dates, returns: Float64Array.from(c.returns) };
      const bench = c.benchmark ? { name: "Benchmark", returns: { dates: c.dates, returns: Float64Array.from(c.benchmark) } } : undefined;
      const rows = metricRows(subject, "Strategy", bench);
      const si = c.columns.indexOf("Strategy");
      const bi = c.columns.indexOf("Benchmark");
      const mismatches: string[] = [];
      for (const row of rows) {
        const key = oracleKey(row.metric);
        const want = c.expected[key] ?? [];
        expect(want.length > 0 || CONTRACT_OVERRIDES[c.name]?.[key] !== undefined, `QuantStats has no row ${key}`).toBe(true);
        const wantS = CONTRACT_OVERRIDES[c.name]?.[key] ?? want[si];
        if (row.Strategy !== wantS) mismatches.push(`${key}: ${row.Strategy} vs ${wantS}`);
        if (bench && row.Benchmark !== want[bi]) mismatches.push(`${key} (benchmark): ${row.Benchmark} vs ${want[bi]}`);
      }
      expect(mismatches).toEqual([]);
      // Every QuantStats row but "Time in Market" (not in the contract) is one of ours.
      const ours = rows.map((r) => oracleKey(r.metric)).filter((k) => c.expected[k] !== undefined);
      expect(Object.keys(c.expected).filter((k) => k !== "Time in Market").sort()).toEqual(ours.sort());
    });
  }
});
