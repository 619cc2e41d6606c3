// The contract's display rules for metric values (§6), apart from the metrics themselves.

/** numpy/pandas round(x, 2): scale, round half to even, unscale. */
export function round2(x: number): number {
  const y = x * 100;
  const r = Math.abs(y % 1) === 0.5 ? 2 * Math.round(y / 2) : Math.round(y);
  return r / 100 + 0; // + 0 turns −0 into 0
}

/** Python's str() of a float: the shortest decimal, with at least one fractional digit. */
export function pyStr(x: number): string {
  const s = String(x);
  return /[.eE]/.test(s) ? s : `${s}.0`;
}

const bad = (x: number) => !Number.isFinite(x);

export const fmtNumber = (x: number) => (bad(x) ? "-" : pyStr(round2(x)));
export const fmtPercent = (x: number) => (bad(x) ? "-" : `${pyStr(round2(x * 100))}%`);
export const fmtInt = (x: number) => (bad(x) ? "-" : String(Math.round(x)));

/** `{:,.2f}%` of the fraction × 100 ("1,303.90%"). */
export function fmtCumulative(x: number): string {
  if (bad(x)) return "-";
  const [int, frac] = Math.abs(x * 100).toFixed(2).split(".");
  const sign = x * 100 < 0 && Number(`${int}.${frac}`) !== 0 ? "-" : "";
  return `${sign}${int.replace(/\B(?=(\d{3})+(?!\d))/g, ",")}.${frac}%`;
}

/** Python's round(x, 2) then str(), as QuantStats prints Beta and Alpha. */
export const fmtPyRound = (x: number) => (bad(x) ? "-" : pyStr(Number(x.toFixed(2)) + 0));
export const fmtPyRoundPercent = (x: number) => (bad(x) ? "-" : `${pyStr(Number((x * 100).toFixed(2)) + 0)}%`);
