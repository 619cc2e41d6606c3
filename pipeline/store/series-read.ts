// Reading long (id, date, value) rows back into one series per id.
import { columns, type Conn } from "./duck.ts";

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

