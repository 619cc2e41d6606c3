// Number and date formatting shared by tables and chart axes.
export const pct = (v: number | null | undefined, digits = 2): string =>
  v === null || v === undefined || !Number.isFinite(v) ? "–" : `${(v * 100).toFixed(digits)}%`;

export const num = (v: number | null | undefined, digits = 2): string =>
  v === null || v === undefined || !Number.isFinite(v) ? "–" : v.toFixed(digits);

const money = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });
export const usd = (v: number | string | null | undefined): string =>
  v === null || v === undefined || v === "" ? "–" : money.format(Number(v));

/** YYYY-MM-DD → seconds since the epoch (UTC), uPlot's time unit. */
export const dateSec = (d: string): number => Date.parse(`${d}T00:00:00Z`) / 1000;

export const RATINGS = [
  "total_rating",
  "return_rating",
  "growth_rating",
  "risk_rating",
  "valuation_rating",
  "technical_rating",
  "macro_rating",
] as const;
export type RatingName = (typeof RATINGS)[number];

/** total_rating → totalRating, the JSON field name. */
export const camel = (s: string): string => s.replace(/_(\w)/g, (_m, c: string) => c.toUpperCase());
/** total_rating → Total */
export const ratingLabel = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1).replace(/_rating$/, "");
