// A run's staging database (store/duck.ts openStagingDuck): a DuckDB file of the process's own in
// the staging folder's `.tmp` sibling, so its tables are stored compressed (what keeps the 5,000 x
// 25 prices from spilling), two openers never share a file, and removing `.tmp` leaves nothing.
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { columns, openDuck, openStagingDuck } from "../../pipeline/store/duck/duck.ts";

let root: string;
let out: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "staging-duck-"));
  out = join(root, ".staging-x");
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

// 300,000 rows: more than two of DuckDB's 122,880-row groups, so the rows are written as
// compressed row groups, not kept in the write-ahead log.
const PRICES =
  `select (date '2001-01-02' + (i % 6000)::integer) as date, 'T' || (i // 6000) as ticker, 100 + (i % ` +
  `997) / 100 as close from range(300000) t(i)`;

/** The compressions DuckDB chose for table `t`'s column `col`. */
async function compressions(conn: Awaited<ReturnType<typeof openDuck>>["conn"], col: string): Promise<string[]> {
  const [kinds = []] = (await columns(
    conn,
    `select distinct compression from pragma_storage_info('t') where column_name = '${col}' and ` +
      `segment_type <> 'VALIDITY' order by 1`,
  )) as [string[]];
  return kinds;
}

it("is a file in <out>.tmp whose tables are stored compressed, unlike a :memory: database", async () => {
  const staging = await openStagingDuck(out, { threads: "1" });
  const memory = await openDuck(":memory:", { threads: "1" });
  try {
    const files = readdirSync(`${out}.tmp`);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(new RegExp(`^staging-${process.pid}-[0-9a-f]{8}\\.duckdb$`));
    const [[path]] = (await columns(
      staging.conn,
      "select path from duckdb_databases() where database_name = current_database()",
    )) as [string[]];
    expect(path).toBe(join(`${out}.tmp`, files[0]));
    for (const db of [staging, memory]) await db.conn.run(`create table t as ${PRICES}`);
    // the same rows: ALP / dictionary / RLE-style encodings in the file, none in memory
    for (const col of ["date", "ticker", "close"]) {
      expect(await compressions(memory.conn, col)).toEqual(["Uncompressed"]);
      expect((await compressions(staging.conn, col)).filter((k) => k !== "Uncompressed").length).toBeGreaterThan(0);
    }
    const sum = "select count(*)::integer, sum(close)::double, count(distinct ticker)::integer from t";
    expect(await columns(staging.conn, sum)).toEqual(await columns(memory.conn, sum));
    // another connection (the export's, the panel's) sees the same database
    const other = await staging.connect();
    expect(await columns(other, "select count(*)::integer from t")).toEqual([[300000]]);
  } finally {
    staging.close();
    memory.close();
  }
});

it("gives each opener its own file (a retried job beside a first attempt still running), gone with .tmp", async () => {
  const a = await openStagingDuck(out);
  const b = await openStagingDuck(out);
  try {
    await a.conn.run("create table only_in_a as select 1 as x");
    expect(
      await columns(b.conn, "select count(*)::integer from information_schema.tables where table_name = 'only_in_a'"),
    ).toEqual([[0]]);
    expect(readdirSync(`${out}.tmp`).filter((f) => f.endsWith(".duckdb"))).toHaveLength(2);
  } finally {
    a.close();
    b.close();
  }
  rmSync(`${out}.tmp`, { recursive: true, force: true });
  expect(existsSync(`${out}.tmp`)).toBe(false);
});

it("dispose removes an opener's own file, leaving another's; the last one leaves no .tmp", async () => {
  const a = await openStagingDuck(out);
  const b = await openStagingDuck(out);
  await b.conn.run("create table kept as select range as x from range(1000)");
  a.dispose();
  expect(existsSync(a.file)).toBe(false);
  expect(existsSync(b.file)).toBe(true);
  // the other opener goes on in the shared folder (its WAL where it was)
  await b.conn.run("insert into kept select range from range(1000)");
  expect(await columns(b.conn, "select count(*)::integer from kept")).toEqual([[2000]]);
  b.dispose();
  expect(existsSync(`${out}.tmp`)).toBe(false);
});
