// QuantStats' conditional_value_at_risk falls back to the VaR when no return lies below it
// (`c_var if ~np.isnan(c_var) else var`); the per-series cVaR and the Serenity Index follow it.
// Reference values are hand computed from QuantStats' formulas (rf 0, sample std, Φ⁻¹(0.05)):
//   returns [0, -0.01]: mean −0.005, σ = 0.01/√2 = 0.0070711, VaR = −0.005 + σ·(−1.6448536) = −0.0166309
//   no return lies below −0.0166309, so cVaR = VaR → "-1.66%" (without the fallback: "-").
//   drawdowns [0, −0.01] are the returns themselves here, so cVaR(drawdowns) = −0.0166309 too;
//   pitfall = 0.0166311 / σ = 2.351940, ulcer = √(0.01² / 1) = 0.01,
//   Serenity = sum(r) / (ulcer × pitfall) = −0.01 / 0.02351940 = −0.4252 → "-0.43".
import { describe, expect, it } from "vitest";
import { metricRows } from "../../pipeline/analytics/index.ts";
import { conditionalVaR, valueAtRisk } from "../../pipeline/analytics/metrics/risk.ts";

const row = (rows: { metric: string }[], label: string) =>
  (rows.find((r) => r.metric === label) as Record<string, string>).S;

describe("cVaR falls back to the VaR (QuantStats)", () => {
  it("returns the VaR when nothing lies below it", () => {
    const r = [0, -0.01];
    expect(valueAtRisk(r)).toBeCloseTo(-0.0166309, 7);
    expect(conditionalVaR(r)).toBe(valueAtRisk(r));
  });

  it("is still the mean below the VaR when some values are", () => {
    // 19 returns of 0.001 and one of −0.05: VaR = mean + σ·Φ⁻¹(0.05) ≈ −0.0164, only −0.05 lies below.
    const r = [...Array(19).fill(0.001), -0.05];
    expect(valueAtRisk(r)).toBeGreaterThan(-0.05);
    expect(conditionalVaR(r)).toBe(-0.05);
  });

  it("drives the published cVaR and Serenity rows", () => {
    const rows = metricRows({ dates: ["2024-01-02", "2024-01-03"], returns: Float64Array.from([0, -0.01]) }, "S");
    expect(row(rows, "Expected Shortfall (cVaR) ")).toBe("-1.66%");
    expect(row(rows, "Daily Value-at-Risk ")).toBe("-1.66%");
    expect(row(rows, "Serenity Index")).toBe("-0.43");
  });

  it("stays undefined when the VaR is (zero volatility)", () => {
    expect(Number.isNaN(conditionalVaR([0, 0, 0]))).toBe(true);
  });
});
