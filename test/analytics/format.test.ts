// The display rules of contract §6, with the contract's own examples.
import { describe, expect, it } from "vitest";
import { fmtCumulative, fmtInt, fmtNumber, fmtPercent, fmtPyRound, fmtPyRoundPercent, round2 } from "../../pipeline/analytics/format.ts";

describe("metric value formats", () => {
  it("writes percentages as the shortest decimal with at least one fractional digit", () => {
    expect(fmtPercent(0.251)).toBe("25.1%");
    expect(fmtPercent(0)).toBe("0.0%");
    expect(fmtPercent(-0.1388)).toBe("-13.88%");
    expect(fmtPercent(-0.00001)).toBe("0.0%"); // rounds to zero: no sign
  });
  it("writes cumulative return as {:,.2f}%", () => {
    expect(fmtCumulative(13.039)).toBe("1,303.90%");
    expect(fmtCumulative(0)).toBe("0.00%");
    expect(fmtCumulative(-0.5)).toBe("-50.00%");
    expect(fmtCumulative(12345.678)).toBe("1,234,567.80%");
  });
  it("writes plain values rounded to 2 places, counts as integers, NaN and infinities as -", () => {
    expect(fmtNumber(1.1312)).toBe("1.13");
    expect(fmtNumber(1)).toBe("1.0");
    expect(fmtNumber(NaN)).toBe("-");
    expect(fmtNumber(Infinity)).toBe("-");
    expect(fmtPercent(-Infinity)).toBe("-");
    expect(fmtInt(397)).toBe("397");
    expect(fmtInt(NaN)).toBe("-");
  });
  it("rounds half to even after scaling, as numpy does", () => {
    expect(round2(0.125)).toBe(0.12);
    expect(round2(0.375)).toBe(0.38);
  });
  it("prints Beta/Alpha with Python's round and Correlation/Treynor as percentages", () => {
    expect(fmtPyRound(1.2999)).toBe("1.3");
    expect(fmtPyRound(-0.02)).toBe("-0.02");
    expect(fmtPyRoundPercent(0.88389)).toBe("88.39%");
  });
});
