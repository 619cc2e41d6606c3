// storedSeries reads (id, date, value) Parquet files in their storage order instead of sorting
// them: the result must be the sorted read's, across a published part and its appended days, and
// a file not stored in (id, date) order must be refused, not read into wrong series.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Binds, type Conn, listValue, openDuck } from "../../pipeline/store/duck/duck.ts";
import { StorageOrderError, seriesOf, storedSeries } from "../../pipeline/store/read/series-read.ts";

const cols = { id: "id", date: "date", value: "ret" };
let db: Awaited<ReturnType<typeof openDuck>>;
let conn: Conn;
const dir = mkdtempSync(join(tmpdir(), "stored-series-"));

/** Writes rows (id, ISO date, value) to a Parquet file in the given order (`orderBy` or as listed). */
async function write(name: string, rows: [string, string, number][], orderBy = "") {
  const file = join(dir, name);
  const b = new Binds();
  const values = rows.map(([id, d, v]) => `(${b.v(id)}, ${b.v(d)}::date, ${b.v(v)}::double)`).join(", ");
  await conn.run(
    `copy (select * from (values ${values}) t(id, date, ret) ${orderBy}) to ${b.v(file)} (format ` +
      `parquet, row_group_size 2048)`,
    b.params,
  );
  return file;
}

beforeAll(async () => {
  db = await openDuck(":memory:", { threads: "1" });
  conn = db.conn;
});
afterAll(() => db.close());

describe("storedSeries", () => {
  it("gives the sorted read's series across a part and its appended days", async () => {
    const rows: [string, string, number][] = [];
    const day = (i: number) => new Date(Date.UTC(2020, 0, 1) + i * 86_400_000).toISOString().slice(0, 10);
    // AAA and BBB share dates; CCC starts later; DDD has only appended days (first priced on one)
    for (let i = 0; i < 3000; i++) rows.push(["AAA", day(i), i / 1000], ["BBB", day(i), -i / 1000]);
    for (let i = 500; i < 3000; i++) rows.push(["CCC", day(i), i / 7]);
    const part = await write("part.parquet", rows, "order by id, date");
    const days = await write(
      "days.parquet",
      [
        ["AAA", day(3000), 0.5],
        ["BBB", day(3000), -0.5],
        ["CCC", day(3000), 0.25],
        ["DDD", day(3000), 0],
        ["AAA", day(3001), 0.125],
      ],
      "order by id, date",
    );
    const got = await storedSeries(conn, [part, days], (b) => `id >= ${b.v("AAA")}`, cols);
    const want = await seriesOf(
      conn,
      "select id, strftime(date, '%Y-%m-%d'), ret from read_parquet($f::varchar[]) order by id, date",
      { f: listValue([part, days]) },
    );
    expect([...got.keys()].sort()).toEqual(["AAA", "BBB", "CCC", "DDD"]);
    for (const [id, s] of want) expect(got.get(id)).toEqual(s);
    expect(got.get("AAA")!.dates.at(-1)).toBe(day(3001));
    expect(got.get("AAA")!.values.at(-2)).toBe(0.5);
    // only the range asked for
    expect([
      ...(await storedSeries(conn, [part, days], (b) => `id >= ${b.v("BBB")} and id < ${b.v("DDD")}`, cols)).keys(),
    ]).toEqual(["BBB", "CCC"]);
  });

  it("refuses a file whose ids are not stored in order", async () => {
    // the same dates for both ids: a read that trusted the order would swap their values silently
    const rows: [string, string, number][] = [
      ["BBB", "2020-01-01", 1],
      ["BBB", "2020-01-02", 2],
      ["AAA", "2020-01-01", 3],
      ["AAA", "2020-01-02", 4],
    ];
    const file = await write("unordered.parquet", rows);
    await expect(storedSeries(conn, [file], () => "true", cols)).rejects.toBeInstanceOf(StorageOrderError);
    const split = await write("split.parquet", [
      ["AAA", "2020-01-01", 1],
      ["BBB", "2020-01-01", 2],
      ["AAA", "2020-01-02", 3],
    ]);
    await expect(storedSeries(conn, [split], () => "true", cols)).rejects.toThrow(/AAA|BBB/);
  });

  it("refuses dates that do not ascend within an id or across the files", async () => {
    const back = await write("back.parquet", [
      ["AAA", "2020-01-02", 1],
      ["AAA", "2020-01-01", 2],
    ]);
    await expect(storedSeries(conn, [back], () => "true", cols)).rejects.toThrow(/dates of AAA/);
    const part = await write("p.parquet", [
      ["AAA", "2020-01-01", 1],
      ["AAA", "2020-01-02", 2],
    ]);
    const again = await write("again.parquet", [["AAA", "2020-01-02", 3]]);
    await expect(storedSeries(conn, [part, again], () => "true", cols)).rejects.toThrow(/dates of AAA/);
  });
});
