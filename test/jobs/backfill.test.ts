// Backfill replaces exactly the window: closes inside it come from the new source, outside it
// from the published snapshot; a rebalance of one portfolio reuses every other table.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { generateSample } from "../../data/generate.ts";
import { rebalanceOne } from "../../jobs/local/rebalance-run.ts";
import { runPipeline } from "../../jobs/local/runner.ts";
import { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { openDuck, scalar } from "../../pipeline/store/duck/duck.ts";
import { loadSnapshot } from "../../pipeline/store/read/load-snapshot.ts";
import { FINANCIAL_STATEMENTS, financialTable } from "../../pipeline/store/snapshot/financial-tables.ts";
import { readManifest, snapshotDir } from "../../pipeline/store/snapshot/snapshots.ts";
import { tinyFiles, writeTinySource } from "../fixtures/tiny-source.ts";

const silent = { info: () => undefined, warn: () => undefined };

describe("backfill and single-portfolio rebalance", () => {
  it("replaces exactly the window's prices and keeps the rest", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "backfill-"));
    const catalog = await Catalog.open(join(dataDir, "catalog.duckdb"));
    await runPipeline({ dataDir, sourceDir: writeTinySource(), catalog, log: silent });
    // The window source: AAA's closes doubled, only for 2024-01-08..2024-01-12.
    const lines = tinyFiles()["prices.csv"].split("\n");
    const windowRows = lines
      .filter((l) => /^2024-01-(08|09|10|11|12),.*,AAA$/.test(l))
      .map((l) => {
        const p = l.split(",");
        p[4] = (Number(p[4]) * 2).toFixed(2);
        return p.join(",");
      });
    expect(windowRows).toHaveLength(5);
    const src = writeTinySource(() => ({
      "prices.csv": [lines[0], ...windowRows].join("\n"),
      "ratings.csv": null,
      "benchmarks.csv": null,
    }));
    await runPipeline({
      dataDir,
      sourceDir: src,
      catalog,
      log: silent,
      window: { from: "2024-01-08", to: "2024-01-12" },
    });
    const snap = await loadSnapshot(dataDir, readManifest(dataDir)!.snapshotId);
    const r = snap.stockReturns.get("AAA")!;
    const i = r.dates.indexOf("2024-01-08");
    // AAA closes: day k = 10 + 0.1k. Jan 5 is day 4 (10.40); Jan 8 is day 5 doubled: 2 × 10.50 = 21.00.
    expect(r.returns[i]).toBeCloseTo(21.0 / 10.4 - 1, 12);
    // Jan 15 (day 10, 11.00) follows the doubled Jan 12 (day 9: 2 × 10.90 = 21.80).
    expect(r.returns[i + 5]).toBeCloseTo(11.0 / 21.8 - 1, 12);
    // Outside the window nothing moved: Jan 3 (day 2, 10.20) over Jan 2 (day 1, 10.10).
    expect(r.returns[r.dates.indexOf("2024-01-03")]).toBeCloseTo(10.2 / 10.1 - 1, 12);
    // The window is replaced whole: BBB has no rows in the window source, so none in the window,
    // and its 15 Jan return spans the gap: 22.00 (day 10) over 20.80 (day 4).
    const bbb = snap.stockReturns.get("BBB")!;
    expect(bbb.dates.filter((d) => d >= "2024-01-08" && d <= "2024-01-12")).toEqual([]);
    expect(bbb.returns[bbb.dates.indexOf("2024-01-15")]).toBeCloseTo(22.0 / 20.8 - 1, 12);
    expect(snap.ratingDates).toEqual(["2024-01-01", "2024-01-29"]);
    expect(snap.benchmarks[0].levels.dates).toHaveLength(30);
  });

  it("keeps the published financial statements when the window source gives no fundamentals", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "backfill-fin-"));
    const src = join(dataDir, "source");
    await generateSample(src, { companies: 30, years: 2, vendorRatings: true });
    const catalog = await Catalog.open(join(dataDir, "catalog.duckdb"));
    await runPipeline({ dataDir, sourceDir: src, catalog, log: silent });
    const before = snapshotDir(dataDir, readManifest(dataDir)!.snapshotId);
    // The window source: one week of prices and the companies, nothing else.
    const win = join(dataDir, "window");
    mkdirSync(win);
    const prices = readFileSync(join(src, "prices.csv"), "utf8").split("\n");
    const week = prices.filter((l) => l.startsWith("2025-06-0"));
    expect(week.length).toBeGreaterThan(30);
    writeFileSync(join(win, "prices.csv"), [prices[0], ...week].join("\n"));
    copyFileSync(join(src, "companies.csv"), join(win, "companies.csv"));
    await runPipeline({
      dataDir,
      sourceDir: win,
      catalog,
      log: silent,
      window: { from: "2025-06-01", to: "2025-06-09" },
    });
    const after = snapshotDir(dataDir, readManifest(dataDir)!.snapshotId);
    expect(after).not.toBe(before);
    const db = await openDuck();
    try {
      for (const s of FINANCIAL_STATEMENTS) {
        // the two folders bound as $before and $after
        const files = {
          before: join(before, financialTable(s), "*.parquet"),
          after: join(after, financialTable(s), "*.parquet"),
        };
        const t = (dir: string) => (dir === before ? "read_parquet($before)" : "read_parquet($after)");
        const n = await scalar<bigint>(db.conn, `select count(*) from ${t(before)}`, { before: files.before });
        expect(Number(n), s).toBeGreaterThan(0);
        // Equal as multisets: nothing lost, nothing added.
        expect(
          Number(
            await scalar<bigint>(
              db.conn,
              `select count(*) from (select * from ${t(before)} except all select * from ${t(after)})`,
              files,
            ),
          ),
          s,
        ).toBe(0);
        expect(
          Number(
            await scalar<bigint>(
              db.conn,
              `select count(*) from (select * from ${t(after)} except all select * from ${t(before)})`,
              files,
            ),
          ),
          s,
        ).toBe(0);
      }
    } finally {
      db.close();
    }
  });

  it("rebalances one portfolio and hard-links the other tables", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "rebalance-"));
    const catalog = await Catalog.open(join(dataDir, "catalog.duckdb"));
    const first = await runPipeline({ dataDir, sourceDir: writeTinySource(), catalog, log: silent });
    const rules = {
      id: "5001",
      name: "Mine",
      description: "",
      rebalanceFrequency: 1,
      maxStocks: 1,
      maxStocksCriteria: "total_rating" as const,
      maxStocksCriteriaOrder: "ascending" as const,
      maxSectorConcentration: null,
      ranges: {},
    };
    const meta = await rebalanceOne({
      dataDir,
      log: silent,
      portfolio: { rules, ownerId: "1", createdAt: "2024-02-01T00:00:00.000Z" },
    });
    const snap = await loadSnapshot(dataDir, meta.id);
    // Ascending total rating, one stock: AAA (5.0) is the lowest on both rating dates.
    expect(snap.portfolios.get("5001")?.holdings.map((h) => h.ticker)).toEqual(["AAA"]);
    expect(snap.portfolios.get("101")?.holdings.map((h) => h.ticker)).toEqual(["CCC", "DDD"]);
    expect(snap.metrics.get("portfolio:5001|")?.[0].metric).toBe("Start Period");
    // every table but the portfolios' is the published file, hard-linked: the rating evidence too
    const ino = (id: string, f: string) => statSync(join(snapshotDir(dataDir, id), f)).ino;
    for (const f of ["prices.parquet", "rating_evidence.parquet", "rating_evidence_ic.parquet"])
      expect(ino(meta.id, f), f).toBe(ino(first.meta.id, f));
  });
});
