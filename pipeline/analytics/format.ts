// The contract's display rules for metric values (§6), apart from the metrics themselves.
// QuantStats prints through numpy: round(x, 2) = rint(x × 100) / 100 (half to even on the scaled
// value), then str() of the float. Beta/Alpha/Correlation/Treynor go through Python's round() on
// numpy floats, which is the same numpy rounding, so one rule serves every row.

/** numpy round(x, 2): scale, round half to even, unscale. */
export function round2(x: number): number {
  const y = x * 100;
  const r = Math.abs(y % 1) === 0.5 ? 2 * Math.round(y / 2) : Math.round(y);
  // + 0 turns −0 into 0: the contract writes "0.0%", where QuantStats would print "-0.0%".
  return r / 100 + 0;
}

/** Python's str() of a float: the shortest round-trip decimal, at least one fractional digit,
 * exponent form from 1e16 (Python's switch point; JavaScript's is 1e21). */
export function pyStr(x: number): string {
  if (Math.abs(x) >= 1e16) return x.toExponential().replace(/e\+(\d)$/, "e+0$1");
  const s = String(x);
  return /[.eE]/.test(s) ? s : `${s}.0`;
}

const bad = (x: number) => !Number.isFinite(x);

/** Plain values: rounded to 2 places ("1.13", "1.0"). */
export const fmtNumber = (x: number) => (bad(x) ? "-" : pyStr(round2(x)));
/** Percentages: the fraction × 100 rounded to 2 places, then "%" ("25.1%", "0.0%", "-13.88%"). */
export const fmtPercent = (x: number) => (bad(x) ? "-" : `${pyStr(round2(x * 100))}%`);
/** Counts of days and wins ("397"). */
export const fmtInt = (x: number) => (bad(x) ? "-" : String(Math.round(x)));

/** `{:,.2f}%` of the fraction × 100 ("1,303.90%"). */
export function fmtCumulative(x: number): string {
  if (bad(x)) return "-";
  const [int, frac] = Math.abs(x * 100)
    .toFixed(2)
    .split(".");
  const sign = x < 0 && (int !== "0" || frac !== "00") ? "-" : "";
  return `${sign}${int.replace(/\B(?=(\d{3})+(?!\d))/g, ",")}.${frac}%`;
}

export type MetricFormat = "percent" | "number" | "int" | "cumulative";

const FORMATS: Record<MetricFormat, (x: number) => string> = {
  percent: fmtPercent,
  number: fmtNumber,
  int: fmtInt,
  cumulative: fmtCumulative,
};

/** One metric value as the contract writes it; NaN and ±∞ are "-". */
export function formatMetric(format: MetricFormat, value: number): string {
  return FORMATS[format](value);
}
