// The rating evidence of a published snapshot as the API serves it (RatingEvidence rows, in the
// tables' order: horizon, then the seven ratings and the baseline). A snapshot published before the
// evidence existed has no such tables: no rows.
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { EvidenceRating, Horizon, RatingEvidence } from "../../ratings/evidence.ts";
import { type Conn, columns } from "../duck/duck.ts";
import { EVIDENCE_IC_TABLE, EVIDENCE_TABLE } from "../snapshot/evidence-tables.ts";

type Num = number | null;

export async function readRatingEvidence(conn: Conn, dir: string): Promise<RatingEvidence[]> {
  const summary = join(dir, `${EVIDENCE_TABLE}.parquet`);
  const series = join(dir, `${EVIDENCE_IC_TABLE}.parquet`);
  if (!existsSync(summary) || !existsSync(series)) return [];
  const s = (await columns(
    conn,
    `select rating, horizon, dates, mean_ic, ic_std, icir, t_stat, hit_rate, [q1, q2, q3, q4, q5],
      spread, top_turnover from read_parquet($f) order by horizon, ord`,
    { f: summary },
  )) as [string[], number[], number[], Num[], Num[], Num[], Num[], Num[], Num[][], Num[], Num[]];
  const [rating, horizon, date, ic, stocks] = (await columns(
    conn,
    `select rating, horizon, strftime(date, '%Y-%m-%d'), ic, stocks from read_parquet($f)
      order by horizon, rating, date`,
    { f: series },
  )) as [string[], number[], string[], number[], number[]];
  const byKey = new Map<string, RatingEvidence["ic"]>();
  for (let i = 0; i < rating.length; i++) {
    const key = `${horizon[i]}|${rating[i]}`;
    const list = byKey.get(key) ?? [];
    byKey.set(key, list);
    list.push({ date: date[i], ic: ic[i], stocks: stocks[i] });
  }
  return s[0].map((r, i) => ({
    rating: r as EvidenceRating,
    horizon: s[1][i] as Horizon,
    dates: s[2][i],
    meanIc: s[3][i],
    icStd: s[4][i],
    icir: s[5][i],
    tStat: s[6][i],
    hitRate: s[7][i],
    quintileReturns: s[2][i] ? (s[8][i] as number[]) : [],
    spread: s[9][i],
    topTurnover: s[10][i],
    ic: byKey.get(`${s[1][i]}|${r}`) ?? [],
  }));
}
