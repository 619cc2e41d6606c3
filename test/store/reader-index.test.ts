// The reader's index, written when a snapshot is published (pipeline/store/snapshot/reader-index.ts): the
// part files' key ranges and every ticker's latest rating, which the reader otherwise derives at
// open. Checked against what the footers and the ratings themselves say, on a real published
// store with several part files, and a snapshot without the index is read the same.
import {
  copyFileSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { Conn } from "../../pipeline/store/duck/duck.ts";
import { setRatingsView } from "../../pipeline/store/read/load-snapshot.ts";
import { latestRatings } from "../../pipeline/store/read/rating-queries.ts";
import { SnapshotReader } from "../../pipeline/store/read/snapshot-reader.ts";
import { linkTree } from "../../pipeline/store/snapshot/link.ts";
import {
  PARTITIONED,
  partRanges,
  RATINGS_LATEST,
  READER_INDEX,
  readPartRanges,
  writeReaderIndex,
} from "../../pipeline/store/snapshot/reader-index.ts";
import { publishedSnapshot } from "./published.ts";

let dataDir: string;
let id: string;
let dir: string;
let db: { conn: Conn; close(): void };

beforeAll(async () => {
  ({ dataDir, id, dir, db } = await publishedSnapshot({ companies: 20, years: 2, seed: 11, tickersPerPartition: 6 }));
}, 180_000);
afterAll(() => db?.close());

it("lists each partitioned table's part files with the key ranges their footers give", async () => {
  const idx = readPartRanges(dir)!;
  expect([...idx.keys()].sort()).toEqual(PARTITIONED.map(([t]) => t).sort());
  for (const [t, key] of PARTITIONED) {
    const fromFooters = await partRanges(db.conn, join(dir, t), key);
    expect(fromFooters.length).toBe(4); // 20 companies in ranges of 6
    expect(idx.get(t)).toEqual(fromFooters);
    // and the ranges are the parts' real first and last keys, in part order, not overlapping
    for (const [k, p] of fromFooters.entries()) {
      const [[lo, hi]] = (
        await db.conn.runAndReadAll(`select min(${key}), max(${key}) from read_parquet($f)`, { f: p.file })
      ).getRowsJS() as [[string, string]];
      expect([p.min, p.max]).toEqual([lo, hi]);
      if (k > 0) expect(p.min > fromFooters[k - 1].max).toBe(true);
    }
  }
});

it("holds every ticker's latest rating row, the one the ratings' last date per ticker gives", async () => {
  await setRatingsView([db.conn], dir);
  const derived = await latestRatings(db.conn);
  const stored = await latestRatings(db.conn, undefined, undefined, join(dir, RATINGS_LATEST));
  expect(stored.size).toBe(20);
  expect(stored).toEqual(derived);
  // by hand for one ticker: its rows sorted by date, the last one
  const t = [...stored.keys()][3];
  const rows = (
    await db.conn.runAndReadAll(
      "select strftime(date, '%Y-%m-%d') from ratings where upper(ticker) = $t order by date desc limit 1",
      { t },
    )
  ).getRowsJS();
  expect(stored.get(t)!.date).toBe(rows[0][0]);
});

it("a snapshot published without the index is read the same (the reader derives both itself)", async () => {
  const withIndex = await SnapshotReader.open(dataDir, id, { warm: false });
  const moved = [READER_INDEX, RATINGS_LATEST].map((f) => [join(dir, f), join(dir, `${f}.aside`)] as const);
  for (const [a, b] of moved) renameSync(a, b);
  try {
    const without = await SnapshotReader.open(dataDir, id, { warm: false });
    try {
      expect(without.latest).toEqual(withIndex.latest);
      expect((without as unknown as { parts: unknown }).parts).toEqual(
        (withIndex as unknown as { parts: unknown }).parts,
      );
      for (const c of [without.companies[0], without.companies[10], without.companies.at(-1)!]) {
        expect(await without.stockReturns(c.ticker)).toEqual(await withIndex.stockReturns(c.ticker));
        expect(await without.companyFinancials(c.ticker.toUpperCase())).toEqual(
          await withIndex.companyFinancials(c.ticker.toUpperCase()),
        );
      }
    } finally {
      without.close();
    }
  } finally {
    for (const [a, b] of moved) renameSync(b, a);
    withIndex.close();
  }
});

it("hard links to the published snapshot take their entries from its index; a changed file is read again", async () => {
  const tmp = mkdtempSync(join(tmpdir(), "reader-index-"));
  try {
    // a base whose index says something the footers do not, for two files: which entries are reused shows
    const base = join(tmp, "base");
    linkTree(dir, base, (f) => f === READER_INDEX);
    const idx = JSON.parse(readFileSync(join(dir, READER_INDEX), "utf8"));
    idx.parts.stock_metrics[0].min = "marked";
    idx.parts.stock_metrics[1].min = "marked";
    writeFileSync(join(base, READER_INDEX), JSON.stringify(idx));
    // the next folder: links of the base (as a rebalance or an append makes), one part rewritten
    const next = join(tmp, "next");
    linkTree(base, next, (f) => f === READER_INDEX || f === RATINGS_LATEST);
    const changed = join(next, "stock_metrics", "part-0001.parquet");
    unlinkSync(changed);
    copyFileSync(join(base, "stock_metrics", "part-0001.parquet"), changed);
    await writeReaderIndex(next, base);
    const got = readPartRanges(next)!;
    const truth = readPartRanges(dir)!;
    expect(got.get("stock_metrics")![0].min).toBe("marked"); // a link: the base's entry
    // rewritten: read from its footer
    expect(got.get("stock_metrics")![1].min).toBe(truth.get("stock_metrics")![1].min);
    for (const [t] of PARTITIONED)
      if (t !== "stock_metrics")
        expect(got.get(t)!.map((p) => [p.min, p.max])).toEqual(truth.get(t)!.map((p) => [p.min, p.max]));
    // the ratings are the base's files: their latest rows are the base's file, linked
    expect(statSync(join(next, RATINGS_LATEST)).ino).toBe(statSync(join(base, RATINGS_LATEST)).ino);
    // without a base everything is read: the marks are gone, and nothing of the base is written through
    await writeReaderIndex(next);
    expect(readPartRanges(next)!.get("stock_metrics")![0].min).toBe(truth.get("stock_metrics")![0].min);
    expect(statSync(join(next, RATINGS_LATEST)).ino).not.toBe(statSync(join(base, RATINGS_LATEST)).ino);
    expect(readFileSync(join(base, RATINGS_LATEST))).toEqual(readFileSync(join(dir, RATINGS_LATEST)));
    // a rebalance links every file, the index and the latest ratings too: written again (twice, as
    // a retried publish would), nothing is left beside them (a rename between two links of one file
    // does nothing) and the links stay the base's bytes
    const all = join(tmp, "all");
    linkTree(base, all);
    for (let i = 0; i < 2; i++) await writeReaderIndex(all, base);
    expect(readdirSync(all).filter((f) => f.endsWith(".tmp"))).toEqual([]);
    expect(statSync(join(all, RATINGS_LATEST)).ino).toBe(statSync(join(base, RATINGS_LATEST)).ino);
    expect(readPartRanges(all)!.get("stock_metrics")![0].min).toBe("marked");
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
