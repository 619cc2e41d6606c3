// The reader is warm before the holder moves the reference: opening reads the footer of every
// Parquet file a request may read, so the first requests after a swap open no file cold. Observed
// through DuckDB itself (duckdb_external_file_cache(): the files whose bytes it has read), on a
// real published store whose partitioned tables have several part files.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { lazyReader, SnapshotHolder } from "../../pipeline/store/read/holder.ts";
import { readableFiles } from "../../pipeline/store/read/reader-open.ts";
import { SnapshotReader } from "../../pipeline/store/read/snapshot-reader.ts";
import { PARTITIONED } from "../../pipeline/store/snapshot/reader-index.ts";
import { snapshotDir } from "../../pipeline/store/snapshot/snapshots.ts";
import { generatedStore } from "./published.ts";

let dataDir: string;
let first: string;
let second: string;
let holder: SnapshotHolder<SnapshotReader>;

beforeAll(async () => {
  const store = await generatedStore({ companies: 20, years: 2, seed: 7, tickersPerPartition: 6 });
  dataDir = store.dataDir;
  first = await store.run();
  holder = new SnapshotHolder(
    dataDir,
    (e) => {
      throw e;
    },
    lazyReader(200),
  );
  await holder.refresh();
  second = await store.run();
}, 180_000);
afterAll(() => holder?.stop());

/** One request of each per-ticker or per-date kind, on tickers spread over the part files. */
async function requests(r: SnapshotReader): Promise<void> {
  for (const c of [r.companies[0], r.companies[9], r.companies.at(-1)!]) {
    await r.stockReturns(c.ticker);
    await r.metricRows("stock", c.ticker, null);
    await r.metricRows("stock", c.ticker, r.benchmarks[0].id);
    await r.companyFinancials(c.ticker.toUpperCase());
    await r.ratingHistory(c.ticker.toUpperCase());
  }
  await r.ratedPage({ date: r.ratingDates.at(-1)!, key: "return_rating", descending: true }, 0, 5);
  await r.ratingsAsOf([r.companies[1].ticker.toUpperCase()], r.ratingDates[0]);
  await r.portfolio(r.predefinedIds[0]);
  await r.metricRows("portfolio", r.predefinedIds[0], null);
}

it("lists every Parquet file a request may read: each part of the partitioned tables, no prices", () => {
  const dir = snapshotDir(dataDir, second);
  const files = readableFiles(dir);
  for (const t of ["stock_metrics", "stock_returns"]) {
    const parts = readdirSync(join(dir, t)).filter((f) => f.endsWith(".parquet"));
    expect(parts.length).toBe(4); // 20 companies in ranges of 6
    for (const p of parts) expect(files).toContain(join(dir, t, p));
  }
  for (const t of [
    "companies",
    "ratings",
    "portfolios",
    "holdings",
    "portfolio_returns",
    "portfolio_turnover",
    "portfolio_metrics",
    "benchmark_defs",
    "benchmark_levels",
  ])
    expect(files).toContain(join(dir, `${t}.parquet`));
  // the statements' one-query copy, not the four wide tables it was made from
  expect(files.filter((f) => f.includes("/financial_rows/")).length).toBe(4);
  expect(files.filter((f) => f.includes("/financial_")).length).toBe(4);
  expect(files).not.toContain(join(dir, "prices.parquet"));
});

it("a swap moves the reference to a reader that has read every footer: its first requests open no file", async () => {
  const old = holder.get()!;
  expect(old.id).toBe(first);
  const next = (await holder.refresh())!;
  expect(next.id).toBe(second);
  const opened = await next.openedFiles();
  expect([...opened].sort()).toEqual(readableFiles(snapshotDir(dataDir, second)));
  await requests(next);
  expect([...(await next.openedFiles())].sort()).toEqual([...opened].sort());
}, 60_000);

it("without the warm-up the same first requests open files cold (what the warm-up saves)", async () => {
  const cold = await SnapshotReader.open(dataDir, second, { warm: false });
  try {
    const before = await cold.openedFiles();
    await requests(cold);
    const after = await cold.openedFiles();
    const newlyOpened = [...after].filter((f) => !before.has(f)).sort();
    // open() read the small tables; the part files' ranges come from the index written at publish
    // (reader-index.ts), so the parts the requests read are cold too, with the per-request tables
    const dir = snapshotDir(dataDir, second);
    const parts = newlyOpened.filter((f) => PARTITIONED.some(([t]) => f.startsWith(`${join(dir, t)}/`)));
    expect(parts.length).toBeGreaterThan(0);
    expect(newlyOpened.filter((f) => !parts.includes(f))).toEqual(
      ["holdings", "portfolio_metrics", "portfolio_returns", "portfolio_turnover"].map((t) =>
        join(dir, `${t}.parquet`),
      ),
    );
  } finally {
    cold.close();
  }
}, 60_000);
