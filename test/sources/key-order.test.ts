// A source table staged in strictly ascending key order needs neither the grouping that finds
// repeated keys nor a sort when it is written (pipeline/sources/load-table.ts `keysAscending`,
// ingest.ts): checked on hand-made tables, on the reject report of a repeated key that sits next to
// its first occurrence, and on a whole run: a generated source and the same rows shuffled publish
// the same prices.parquet, byte for byte.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateSample } from "../../data/generate.ts";
import { runPipeline } from "../../jobs/local/runner.ts";
import { stageSource } from "../../pipeline/sources/index.ts";
import { keysAscending } from "../../pipeline/sources/load-table.ts";
import { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { type Conn, columns, openDuck } from "../../pipeline/store/duck/duck.ts";
import { snapshotDir } from "../../pipeline/store/snapshot/snapshots.ts";
import { tinyFiles, writeTinySource } from "../fixtures/tiny-source.ts";

// one database for the file: every check makes the tables it reads (create or replace)
let db: Awaited<ReturnType<typeof openDuck>>;
let conn: Conn;
beforeAll(async () => {
  db = await openDuck();
  conn = db.conn;
});
afterAll(() => db?.close());

/** A table `t(ticker, date)` with these rows, in this order. */
async function table(rows: [string, string][]): Promise<void> {
  await conn.run("create or replace table t (ticker varchar, date date)");
  if (rows.length) await conn.run(`insert into t values ${rows.map(([a, d]) => `('${a}', '${d}')`).join(", ")}`);
}

describe("keysAscending", () => {
  it("is true only for keys each greater than the one before, compared column by column", async () => {
    const sorted: [string, string][] = [
      ["A", "2024-01-02"],
      ["A", "2024-01-03"],
      ["AB", "2024-01-01"],
      ["B", "2023-12-29"],
      ["B", "2024-01-02"],
    ];
    await table(sorted);
    expect(await keysAscending(conn, "t", ["ticker", "date"])).toBe(true);
    // two rows swapped at the end, at the start, in the middle
    for (const [i, j] of [
      [3, 4],
      [0, 1],
      [1, 2],
    ]) {
      const r = [...sorted];
      [r[i], r[j]] = [r[j], r[i]];
      await table(r);
      expect(await keysAscending(conn, "t", ["ticker", "date"])).toBe(false);
    }
    // a repeated key right after its first occurrence: ordered, but not strictly
    await table([...sorted.slice(0, 2), sorted[1], ...sorted.slice(2)]);
    expect(await keysAscending(conn, "t", ["ticker", "date"])).toBe(false);
    // one column: the tickers of the sorted rows repeat
    await table(sorted);
    expect(await keysAscending(conn, "t", ["ticker"])).toBe(false);
    await table([
      ["A", "2024-01-02"],
      ["B", "2024-01-01"],
    ]);
    expect(await keysAscending(conn, "t", ["ticker"])).toBe(true);
    expect(await keysAscending(conn, "t", ["date"])).toBe(false);
    // one row, no row
    await table([["A", "2024-01-02"]]);
    expect(await keysAscending(conn, "t", ["ticker", "date"])).toBe(true);
    await table([]);
    expect(await keysAscending(conn, "t", ["ticker", "date"])).toBe(true);
  });
});

/** The tiny source's prices, rewritten in (ticker, date) order. */
function tickerOrdered(prices: string): string[] {
  const [head, ...rows] = prices.split("\n");
  const key = (l: string) => `${l.split(",").at(-1)} ${l.split(",")[0]}`;
  return [head, ...rows.sort((a, b) => (key(a) < key(b) ? -1 : 1))];
}

describe("stageSource", () => {
  it("marks a table staged in key order, and still names a repeated key next to its first occurrence", async () => {
    const f = tinyFiles();
    // the tiny prices and ratings are in (date, ticker) order, not their key's; the one index
    // series is in (benchmark, date) order, the companies in ticker order
    expect((await stageSource(conn, writeTinySource())).keyOrdered).toEqual(new Set(["companies", "benchmarks"]));
    const lines = tickerOrdered(f["prices.csv"]);
    const s = await stageSource(
      conn,
      writeTinySource(() => ({ "prices.csv": lines.join("\n") })),
    );
    expect(s.rejects).toEqual([]);
    expect(s.keyOrdered!.has("prices")).toBe(true);
    // row 3 again as row 4: still in order, not strictly
    const repeated = [...lines.slice(0, 4), lines[3], ...lines.slice(4)];
    const r = await stageSource(
      conn,
      writeTinySource(() => ({ "prices.csv": repeated.join("\n") })),
    );
    expect(r.rejects).toContainEqual({
      file: "prices.csv",
      row: 4,
      column: "ticker+date",
      reason: "duplicate key, first at row 3",
    });
    expect(r.tables.has("prices")).toBe(false);
  });
});

it("a source in key order and the same rows shuffled publish the same prices.parquet, byte for byte", async () => {
  const sorted = mkdtempSync(join(tmpdir(), "key-order-src-"));
  await generateSample(sorted, { companies: 20, years: 2, seed: 3 });
  const shuffled = mkdtempSync(join(tmpdir(), "key-order-shuffled-"));
  await generateSample(shuffled, { companies: 20, years: 2, seed: 3 });
  const [head, ...rows] = readFileSync(join(sorted, "prices.csv"), "utf8").trimEnd().split("\n");
  // a fixed permutation (a multiplicative step coprime with the row count, not a random one)
  const n = rows.length;
  let step = 7919;
  while (gcd(step, n) !== 1) step++;
  writeFileSync(join(shuffled, "prices.csv"), `${[head, ...rows.map((_, i) => rows[(i * step) % n])].join("\n")}\n`);
  const published: string[] = [];
  for (const src of [sorted, shuffled]) {
    const dataDir = mkdtempSync(join(tmpdir(), "key-order-store-"));
    const catalog = await Catalog.open(join(dataDir, "catalog.duckdb"));
    const { meta } = await runPipeline({
      dataDir,
      sourceDir: src,
      catalog,
      log: { info: () => undefined, warn: () => undefined },
      workers: 0,
    });
    published.push(join(snapshotDir(dataDir, meta.id), "prices.parquet"));
  }
  // the sorted file went through without a sort: its staged order is the key's
  await stageSource(conn, sorted).then((s) => expect(s.keyOrdered!.has("prices")).toBe(true));
  await stageSource(conn, shuffled).then((s) => expect(s.keyOrdered!.has("prices")).toBe(false));
  expect(readFileSync(published[0]).equals(readFileSync(published[1]))).toBe(true);
  const [[inOrder]] = (await columns(
    conn,
    `select bool_and(ok) from (select (ticker, date) > lag((ticker, date)) over (order by file_row_number) or ` +
      `file_row_number = 0 as ok from read_parquet('${published[0]}', file_row_number = true))`,
  )) as [[boolean]];
  expect(inOrder).toBe(true);
}, 180_000);

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}
