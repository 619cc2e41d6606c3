// Reading long (id, date, value) rows back into one series per id.
import { isoFromEpochDay } from "../analytics/dates.ts";
import { columns, type Conn } from "./duck.ts";
import { numericColumns } from "./typed-read.ts";

/** Long (id, date, value) rows → one series per id (dates cross as text, once per distinct date). */
export async function seriesOf(conn: Conn, sql: string): Promise<Map<string, { dates: string[]; values: Float64Array }>> {
  const [ids = [], ds = [], v = []] = (await columns(conn, sql)) as [string[], string[], number[]];
  const out = new Map<string, { dates: string[]; values: Float64Array }>();
  let start = 0;
  for (let i = 1; i <= ids.length; i++) {
    if (i < ids.length && ids[i] === ids[start]) continue;
    out.set(ids[start], { dates: ds.slice(start, i), values: Float64Array.from(v.slice(start, i)) });
    start = i;
  }
  return out;
}

/**
 * The same as `seriesOf` over `relation` (columns id, date, value; `where` filters), for big reads:
 * values and dates (as epoch days) cross as typed arrays, and series of the same dates share one
 * dates array, so their calendar parts and aligned benchmarks are computed once.
 */
export async function seriesOfDays(conn: Conn, relation: string, where: string, col: { id: string; date: string; value: string }): Promise<Map<string, { dates: string[]; values: Float64Array }>> {
  const [ids = [], counts = []] = (await columns(conn, `select ${col.id}, count(*)::integer from ${relation} where ${where} group by 1 order by 1`)) as [string[], number[]];
  const [days, values] = (await numericColumns(conn, `select (${col.date} - DATE '1970-01-01')::integer, ${col.value}::double from ${relation} where ${where} order by ${col.id}, ${col.date}`, ["i32", "f64"])) as [Int32Array, Float64Array];
  const iso = new Map<number, string>();
  const text = (d: number) => iso.get(d) ?? (iso.set(d, isoFromEpochDay(d)), iso.get(d)!);
  // Candidates by length, first and last day: a full comparison only where those three agree.
  const seen = new Map<string, { at: number; dates: string[] }[]>();
  const same = (a: number, b: number, len: number) => {
    for (let k = 0; k < len; k++) if (days[a + k] !== days[b + k]) return false;
    return true;
  };
  const out = new Map<string, { dates: string[]; values: Float64Array }>();
  let at = 0;
  for (let k = 0; k < ids.length; k++) {
    const len = counts[k];
    const key = `${len}:${days[at]}:${days[at + len - 1]}`;
    const candidates = seen.get(key) ?? [];
    let dates = candidates.find((c) => same(c.at, at, len))?.dates;
    if (!dates) {
      dates = Array.from(days.subarray(at, at + len), text);
      candidates.push({ at, dates });
      seen.set(key, candidates);
    }
    out.set(ids[k], { dates, values: values.slice(at, at + len) });
    at += len;
  }
  return out;
}
