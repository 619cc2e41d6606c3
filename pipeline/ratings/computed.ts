// The price-only proxies the factor model (model.ts, docs/ratings.md) replaced: kept as the ratings
// benchmark's baseline (bench/ratings.ts) and for the portfolio benchmark's ratings. Monthly, on the
// first trading date of each month, using only data up to that date. Each rating is a cross-sectional
// percentile (0..10) of one signal:
//   return     trailing 252-day return            (higher is better)
//   growth     trailing 126-day return            (higher is better)
//   risk       trailing 126-day volatility        (lower is better)
//   technical  close / 200-day average            (higher is better)
//   valuation  close / trailing 252-day high      (lower is better: further below the high)
//   macro      the stock's sector's mean 126-day return, ranked across sectors
//   total      mean of the six
// A stock needs 21 priced days before it is rated; missing-history signals use what exists.
import { type Company, type PricePanel, RATING_NAMES, type RatingRow } from "../types.ts";

const round4 = (x: number) => Math.round(x * 1e4) / 1e4;

/** Percentile ranks in 0..10 (ties share the mean rank); NaN inputs stay NaN. */
export function percentileScores(values: number[], higherIsBetter = true): number[] {
  const idx = values.map((v, i) => [v, i] as const).filter(([v]) => Number.isFinite(v));
  idx.sort((a, b) => (higherIsBetter ? a[0] - b[0] : b[0] - a[0]));
  const out = new Array<number>(values.length).fill(NaN);
  const n = idx.length;
  for (let i = 0; i < n; ) {
    let j = i;
    while (j + 1 < n && idx[j + 1][0] === idx[i][0]) j++;
    const score = n === 1 ? 5 : (10 * ((i + j) / 2)) / (n - 1);
    for (let k = i; k <= j; k++) out[idx[k][1]] = score;
    i = j + 1;
  }
  return out;
}

function firstTradingDatesOfMonths(dates: string[]): number[] {
  const out: number[] = [];
  for (let d = 0; d < dates.length; d++) if (d === 0 || dates[d].slice(0, 7) !== dates[d - 1].slice(0, 7)) out.push(d);
  return out;
}

/** Close on or before day d, walking back over gaps; and how many priced days precede. */
function signalsAt(close: Float64Array, d: number) {
  const px: number[] = [];
  for (let k = d; k >= 0 && px.length < 253; k--) if (!Number.isNaN(close[k])) px.push(close[k]);
  if (px.length < 21 || Number.isNaN(close[d])) return null;
  const last = px[0];
  const back = (n: number) => px[Math.min(n, px.length - 1)];
  let sum = 0,
    sumSq = 0,
    m = 0;
  for (let k = 0; k < Math.min(126, px.length - 1); k++) {
    const r = px[k] / px[k + 1] - 1;
    sum += r;
    sumSq += r * r;
    m++;
  }
  const vol = m > 1 ? Math.sqrt((sumSq - (sum * sum) / m) / (m - 1)) : NaN;
  const sma = px.slice(0, 200).reduce((a, b) => a + b, 0) / Math.min(200, px.length);
  return {
    ret252: last / back(252) - 1,
    ret126: last / back(126) - 1,
    vol,
    tech: last / sma,
    high: last / Math.max(...px),
  };
}

export function computeRatings(panel: PricePanel, companies: Company[]): RatingRow[] {
  const sectorOf = new Map(companies.map((c) => [c.ticker, c.sector]));
  const out: RatingRow[] = [];
  for (const d of firstTradingDatesOfMonths(panel.dates)) {
    const live = panel.tickers.map((t, i) => ({ t, s: signalsAt(panel.close[i], d) })).filter((x) => x.s !== null) as {
      t: string;
      s: NonNullable<ReturnType<typeof signalsAt>>;
    }[];
    if (live.length === 0) continue;
    const sectorMean = new Map<string, number[]>();
    for (const x of live) {
      const k = sectorOf.get(x.t) ?? "";
      sectorMean.set(k, [...(sectorMean.get(k) ?? []), x.s.ret126]);
    }
    const sectors = [...sectorMean.keys()];
    const sectorScore = new Map(
      percentileScores(
        sectors.map((k) => sectorMean.get(k)!.reduce((a, b) => a + b, 0) / sectorMean.get(k)!.length),
      ).map((v, i) => [sectors[i], v]),
    );
    const ret = percentileScores(live.map((x) => x.s.ret252));
    const growth = percentileScores(live.map((x) => x.s.ret126));
    const risk = percentileScores(
      live.map((x) => x.s.vol),
      false,
    );
    const tech = percentileScores(live.map((x) => x.s.tech));
    const val = percentileScores(
      live.map((x) => x.s.high),
      false,
    );
    live.forEach((x, i) => {
      const parts = [ret[i], growth[i], risk[i], val[i], tech[i], sectorScore.get(sectorOf.get(x.t) ?? "")!].map((v) =>
        Number.isFinite(v) ? v : 5,
      );
      const row = { date: panel.dates[d], ticker: x.t } as RatingRow;
      const [r, g, k, v, t, m] = parts;
      Object.assign(row, {
        return_rating: r,
        growth_rating: g,
        risk_rating: k,
        valuation_rating: v,
        technical_rating: t,
        macro_rating: m,
      });
      row.total_rating = (r + g + k + v + t + m) / 6;
      for (const n of RATING_NAMES) row[n] = round4(row[n]);
      out.push(row);
    });
  }
  return out;
}
