// The display rules of contract §6: its own examples, plus the numpy/Python behaviours QuantStats
// prints through (values checked in Python 3.11 / numpy 1.24: str(np.round(x, 2))).
import { describe, expect, it } from "vitest";
import { formatMetric, pyStr, round2 } from "../../pipeline/analytics/format.ts";

describe("formatMetric", () => {
  it("writes percentages as the fraction × 100 to 2 places, shortest decimal, at least one fractional digit", () => {
    expect(formatMetric("percent", 0.251)).toBe("25.1%"); // contract example
    expect(formatMetric("percent", 0)).toBe("0.0%"); // contract example
    expect(formatMetric("percent", -0.1388)).toBe("-13.88%"); // contract example
    expect(formatMetric("percent", 0.88389)).toBe("88.39%"); // Correlation as QuantStats prints it
    expect(formatMetric("percent", 1)).toBe("100.0%");
  });
  it("drops the sign of a value that rounds to zero (QuantStats would print -0.0%)", () => {
    expect(formatMetric("percent", -0.00001)).toBe("0.0%");
    expect(formatMetric("number", -0.004)).toBe("0.0");
  });
  it("writes Cumulative Return as {:,.2f}%", () => {
    expect(formatMetric("cumulative", 13.039)).toBe("1,303.90%"); // contract example
    expect(formatMetric("cumulative", 0.4314)).toBe("43.14%");
    expect(formatMetric("cumulative", 0.431)).toBe("43.10%"); // two decimals always
    expect(formatMetric("cumulative", 0)).toBe("0.00%");
    expect(formatMetric("cumulative", -0.5)).toBe("-50.00%");
    expect(formatMetric("cumulative", 12345.678)).toBe("1,234,567.80%");
  });
  it("writes plain values rounded to 2 places and counts as integers", () => {
    expect(formatMetric("number", 1.1312)).toBe("1.13"); // contract example
    expect(formatMetric("number", 1)).toBe("1.0"); // contract example
    expect(formatMetric("number", 1.2999)).toBe("1.3"); // a Beta: str(round(np.float64(1.2999), 2))
    expect(formatMetric("number", -0.02)).toBe("-0.02");
    expect(formatMetric("int", 397)).toBe("397"); // contract example
    expect(formatMetric("int", 0)).toBe("0");
  });
  it("writes NaN and infinities as -", () => {
    for (const f of ["percent", "number", "int", "cumulative"] as const) {
      expect(formatMetric(f, NaN)).toBe("-");
      expect(formatMetric(f, Infinity)).toBe("-");
      expect(formatMetric(f, -Infinity)).toBe("-");
    }
  });
  it("rounds like numpy: rint of the scaled value, half to even", () => {
    expect(round2(0.125)).toBe(0.12); // np.round(0.125, 2) == 0.12 (12.5 → 12)
    expect(round2(0.375)).toBe(0.38); // 37.5 → 38
    expect(round2(1.005)).toBe(1); // 1.005 × 100 = 100.49999999999999 → 100
    expect(round2(0.285)).toBe(0.28); // 28.499999999999996 → 28
    expect(round2(-2.675)).toBe(-2.68); // −2.675 × 100 = −267.5 exactly → −268 (even)
  });
  it("writes floats as Python's str() does", () => {
    expect(pyStr(3)).toBe("3.0");
    expect(pyStr(0.1)).toBe("0.1");
    expect(pyStr(1e16)).toBe("1e+16"); // str(1e16)
    expect(pyStr(-1.5e17)).toBe("-1.5e+17");
    expect(pyStr(123456789012345.67)).toBe("123456789012345.67");
  });
});
