// Partitioned stages: the same snapshot whether the per-ticker work runs as one partition inline
// or as one-company partitions on two worker threads; the fundamentals splitter keeps each
// record's row number in its file, so a reject names the same row as an unsplit read.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { generateSample } from "../../data/generate.ts";
import { runPipeline } from "../../jobs/local/runner.ts";
import { readFundamentals } from "../../pipeline/sources/fundamentals.ts";
import { partitionOf, splitFundamentals } from "../../pipeline/sources/fundamentals-split.ts";
import { SourceRejectedError } from "../../pipeline/sources/report.ts";
import { boundsOf, tickerRanges } from "../../pipeline/stages/partitions.ts";
import { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { loadSnapshot } from "../../pipeline/store/read/load-snapshot.ts";
import { snapshotDir } from "../../pipeline/store/snapshot/snapshots.ts";

const silent = { info: () => undefined, warn: () => undefined };

async function run(sourceDir: string, workers: number, tickersPerPartition?: number) {
  const dataDir = mkdtempSync(join(tmpdir(), "parts-"));
  const catalog = await Catalog.open(join(dataDir, "catalog.duckdb"));
  const { meta } = await runPipeline({ dataDir, sourceDir, catalog, log: silent, workers, tickersPerPartition });
  const { id: _id, createdAt: _c, ...snap } = await loadSnapshot(dataDir, meta.id);
  return snap;
}

describe("partitioned stages", () => {
  it("publish the same snapshot inline and on worker threads, one company per partition", async () => {
    const src = mkdtempSync(join(tmpdir(), "parts-src-"));
    await generateSample(src, { companies: 20, years: 2, seed: 7 });
    const whole = await run(src, 0);
    const split = await run(src, 2, 1);
    expect(whole.companies.length).toBe(20);
    expect(whole.financials.size).toBeGreaterThan(0);
    expect(whole.financials.values().next().value!.quarterly.income.length).toBeGreaterThan(0);
    expect(whole.metrics.size).toBe(split.metrics.size);
    expect(split).toEqual(whole);
  }, 120_000);

  it("ranges cover every ticker once and the splitter routes by them", () => {
    const tickers = ["A", "B", "C", "D", "E"];
    const ranges = tickerRanges(tickers, 2);
    expect(ranges.map((r) => [r.from, r.to])).toEqual([
      [null, "C"],
      ["C", "E"],
      ["E", null],
    ]);
    expect(tickers.map((t) => partitionOf(boundsOf(ranges), t))).toEqual([0, 0, 1, 1, 2]);
  });

  it("makes a multiple of the workers' count of ranges, so none idles at the end", () => {
    const tickers = Array.from({ length: 505 }, (_, i) => `T${String(i).padStart(3, "0")}`);
    // 505 at 250 per range is 3 ranges; two workers get 4 (127, 127, 127, 124 tickers).
    const ranges = tickerRanges(tickers, 250, 2);
    expect(ranges.map((r) => [r.from, r.to])).toEqual([
      [null, "T127"],
      ["T127", "T254"],
      ["T254", "T381"],
      ["T381", null],
    ]);
    expect(tickerRanges(tickers, 250, 1)).toHaveLength(3);
    // Never more ranges than tickers allow: 5 tickers, 4 workers, 2 per range → 3 ranges of 2, 2, 1.
    expect(tickerRanges(["A", "B", "C", "D", "E"], 2, 4).map((r) => r.from)).toEqual([null, "C", "E"]);
  });

  it("a bad row in a later partition is reported with its row in the original file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "parts-fund-"));
    const head = `Ticker;"Fiscal Year";"Fiscal Period";"Report Date";Revenue`;
    const lines = [
      head,
      "AAA;2020;FY;2020-12-31;1",
      "ZZZ;2020;FY;2020-12-31;2",
      "BBB;2020;FY;2020-12-31;3",
      "ZZZ;2021;FY;2021-12-31;oops",
    ];
    mkdirSync(join(dir, "f"), { recursive: true });
    writeFileSync(join(dir, "f", "us-income-annual.csv"), `${lines.join("\n")}\n`);
    const unsplit = await readFundamentals(join(dir, "f"));
    const slices = await splitFundamentals(join(dir, "f"), join(dir, "split"), ["M"]);
    expect(readFileSync(join(slices[1], "us-income-annual.csv"), "utf8")).toBe(
      `${head}\nZZZ;2020;FY;2020-12-31;2\nZZZ;2021;FY;2021-12-31;oops\n`,
    );
    const got = await Promise.all(slices.map((s) => readFundamentals(s, { rowMaps: true })));
    // Row 4 of the file (data rows counted from 1) is the bad one, in both reads.
    expect(unsplit.rejects).toEqual([
      { file: "us-income-annual.csv", row: 4, column: "Revenue", reason: "not a number" },
    ]);
    expect(got.flatMap((g) => g.rejects)).toEqual(unsplit.rejects);
    expect([...got[0].byTicker.keys(), ...got[1].byTicker.keys()]).toEqual(["AAA", "BBB", "ZZZ"]);
  });

  it("a rejected fundamentals row in a later partition fails the run and names its row", async () => {
    const src = mkdtempSync(join(tmpdir(), "parts-bad-"));
    await generateSample(src, { companies: 20, years: 2, seed: 7 });
    const f = join(src, "fundamentals", "us-income-annual.csv");
    const text = readFileSync(f, "utf8").split("\n");
    const cells = text[3].split(";");
    cells[3] = "20x0"; // Fiscal Year
    text[3] = cells.join(";");
    writeFileSync(f, text.join("\n"));
    const err = await run(src, 2, 3).catch((e) => e);
    expect(err).toBeInstanceOf(SourceRejectedError);
    expect((err as SourceRejectedError).rejects).toEqual([
      { file: "us-income-annual.csv", row: 3, column: "Fiscal Year", reason: "not a year" },
    ]);
  }, 120_000);

  it("a run whose fundamentals are the published snapshot's bytes links its financial tables", async () => {
    const src = mkdtempSync(join(tmpdir(), "parts-reuse-"));
    await generateSample(src, { companies: 20, years: 2, seed: 5 });
    const dataDir = mkdtempSync(join(tmpdir(), "parts-reuse-store-"));
    const catalog = await Catalog.open(join(dataDir, "catalog.duckdb"));
    const go = async () => (await runPipeline({ dataDir, sourceDir: src, catalog, log: silent, workers: 0 })).meta.id;
    const inode = (id: string, table = "financial_income") => {
      const d = join(snapshotDir(dataDir, id), table);
      return statSync(join(d, readdirSync(d)[0])).ino;
    };
    const first = await go();
    const second = await go();
    expect(inode(second)).toBe(inode(first));
    expect(inode(second, "financial_rows")).toBe(inode(first, "financial_rows"));
    expect((await loadSnapshot(dataDir, second)).financials).toEqual((await loadSnapshot(dataDir, first)).financials);
    const built = inode(first); // the first snapshot is pruned below (three are kept)
    // A published snapshot from before the tables' one-query copy: they are built again, once.
    rmSync(join(snapshotDir(dataDir, second), "financial_rows"), { recursive: true });
    const upgraded = await go();
    expect(inode(upgraded)).not.toBe(built);
    expect(existsSync(join(snapshotDir(dataDir, upgraded), "financial_rows"))).toBe(true);
    const linked = await go();
    expect(inode(linked, "financial_rows")).toBe(inode(upgraded, "financial_rows"));
    // One changed revenue figure: the tables are built again and carry it.
    const f = join(src, "fundamentals", "us-income-annual.csv");
    const lines = readFileSync(f, "utf8").split("\n");
    const head = lines[0].split(";");
    const cells = lines[1].split(";");
    cells[head.indexOf("Revenue")] = "123456789";
    lines[1] = cells.join(";");
    writeFileSync(f, lines.join("\n"));
    const third = await go();
    expect(inode(third)).not.toBe(inode(linked));
    const ticker = cells[0].toUpperCase();
    const fy = Number(cells[head.indexOf('"Fiscal Year"')]);
    const row = (await loadSnapshot(dataDir, third)).financials
      .get(ticker)!
      .annual.income.find((r) => r["Fiscal Year"] === fy)!;
    expect(row.Revenue).toBe(123456789);
  }, 180_000);

  it("leaves out statements of unlisted companies, bad rows included; a new company list rebuilds them", async () => {
    const src = mkdtempSync(join(tmpdir(), "parts-unknown-"));
    await generateSample(src, { companies: 20, years: 2, seed: 9 });
    const f = join(src, "fundamentals", "us-income-annual.csv");
    const lines = readFileSync(f, "utf8").trimEnd().split("\n");
    const head = lines[0].split(";");
    // Two records of a company no row of companies.csv describes; the second is not even valid.
    const stranger = lines[1].split(";");
    stranger[0] = "ZZZZ";
    const broken = [...stranger];
    broken[head.indexOf('"Fiscal Year"')] = "20x0";
    writeFileSync(f, `${[...lines, stranger.join(";"), broken.join(";")].join("\n")}\n`);
    const dataDir = mkdtempSync(join(tmpdir(), "parts-unknown-store-"));
    const catalog = await Catalog.open(join(dataDir, "catalog.duckdb"));
    const go = async () =>
      (await runPipeline({ dataDir, sourceDir: src, catalog, log: silent, workers: 2, tickersPerPartition: 7 })).meta
        .id;
    const first = await loadSnapshot(dataDir, await go());
    const companies = readFileSync(join(src, "companies.csv"), "utf8").trimEnd().split("\n");
    expect(first.financials.has("ZZZZ")).toBe(false);
    // Every listed company with statements is still there (the generator gives all but one some).
    expect([...first.financials.keys()].sort()).toEqual(
      [...new Set(lines.slice(1).map((l) => l.split(";")[0].toUpperCase()))].sort(),
    );
    // ZZZZ joins the companies (with prices): the fundamentals bytes are the same, the tables are not.
    const cols = companies[0].split(",");
    const row = companies[1].split(",");
    row[cols.indexOf("ticker")] = "ZZZZ";
    if (cols.includes("id")) row[cols.indexOf("id")] = "";
    writeFileSync(join(src, "companies.csv"), `${[...companies, row.join(",")].join("\n")}\n`);
    const prices = readFileSync(join(src, "prices.csv"), "utf8").trimEnd().split("\n");
    const pcols = prices[0].split(",");
    const copy = prices
      .slice(1)
      .filter((l) => l.split(",")[pcols.indexOf("ticker")] === companies[1].split(",")[cols.indexOf("ticker")]);
    writeFileSync(
      join(src, "prices.csv"),
      `${[
        ...prices,
        ...copy.map((l) => {
          const c = l.split(",");
          c[pcols.indexOf("ticker")] = "ZZZZ";
          return c.join(",");
        }),
      ].join("\n")}\n`,
    );
    // Now its broken record counts: the run is refused and names the row (data rows from 1).
    const err = await go().catch((e) => e);
    expect(err).toBeInstanceOf(SourceRejectedError);
    expect((err as SourceRejectedError).rejects).toEqual([
      { file: "us-income-annual.csv", row: lines.length + 1, column: "Fiscal Year", reason: "not a year" },
    ]);
  }, 180_000);
});
