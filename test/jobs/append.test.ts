// The nightly append: a source that only added days to the published one is continued, not
// recomputed, and the snapshot it publishes holds exactly the rows a full run over the whole
// source gives (every table compared as a multiset in DuckDB). Anything else about the source
// falls back to a full run, and rejected new rows publish nothing.
import {
  appendFileSync,
  cpSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Worker } from "bullmq";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { splitAtDate } from "../../data/append-days.ts";
import { generateSample } from "../../data/generate.ts";
import { rebalanceOne } from "../../jobs/local/rebalance-run.ts";
import { runPipeline } from "../../jobs/local/runner.ts";
import { dispatchRun } from "../../jobs/queue/dispatch.ts";
import { startPipelineWorker } from "../../jobs/worker/worker.ts";
import { SourceRejectedError } from "../../pipeline/sources/report.ts";
import { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { Binds, columns, openDuck } from "../../pipeline/store/duck/duck.ts";
import { SnapshotReader } from "../../pipeline/store/read/snapshot-reader.ts";
import { readManifest, readMeta, snapshotDir } from "../../pipeline/store/snapshot/snapshots.ts";
import { noRedis } from "../redis.ts";
import { cleanUpQueues, fileHashes } from "./jobs-fixture.ts";

const silent = { info: () => undefined, warn: () => undefined };
const REDIS = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const prefixBase = `test-append-${process.pid}-${Date.now()}`;
const workers: Worker[] = [];
afterAll(() => cleanUpQueues(prefixBase, workers));
const tmp = (p: string) => mkdtempSync(join(tmpdir(), p));

async function run(dataDir: string, sourceDir: string, env: Record<string, string> = {}) {
  const before = { ...process.env };
  Object.assign(process.env, env);
  try {
    const catalog = await Catalog.open(join(dataDir, "catalog.duckdb"));
    return await runPipeline({ dataDir, sourceDir, catalog, log: silent, workers: 2, tickersPerPartition: 10 });
  } finally {
    process.env = before;
  }
}

/** Each table of a snapshot folder: `<t>.parquet`, a `<t>/` of parts, or `<t>.parquet` plus `<t>.days/`. */
function tablesOf(dir: string): Map<string, string[]> {
  const m = new Map<string, string[]>();
  for (const n of readdirSync(dir)) {
    const p = join(dir, n);
    const t = n.replace(/\.parquet$/, "").replace(/\.days$/, "");
    if (n.endsWith(".parquet")) m.set(t, [...(m.get(t) ?? []), p]);
    else if (!n.includes(".") || n.endsWith(".days"))
      m.set(t, [
        ...(m.get(t) ?? []),
        ...readdirSync(p)
          .filter((f) => f.endsWith(".parquet"))
          .map((f) => join(p, f)),
      ]);
  }
  return m;
}

/** Tables whose rows differ between two snapshot folders (multisets), with the row counts. */
async function differences(a: string, b: string): Promise<{ tables: string[]; rows: Record<string, number> }> {
  const db = await openDuck();
  const ta = tablesOf(a);
  const tb = tablesOf(b);
  const rel = (b: Binds, fs: string[]) => `read_parquet(${b.list(fs)}, union_by_name = true)`;
  const n = async (sql: (b: Binds) => string) => {
    const b = new Binds();
    return Number((await columns(db.conn, sql(b), b.params))[0][0]);
  };
  const out: string[] = [];
  const rows: Record<string, number> = {};
  try {
    for (const t of new Set([...ta.keys(), ...tb.keys()])) {
      if (!ta.has(t) || !tb.has(t)) {
        out.push(`${t} (missing)`);
        continue;
      }
      rows[t] = await n((b) => `select count(*) from ${rel(b, ta.get(t)!)}`);
      const d =
        (await n(
          (b) =>
            `select count(*) from (select * from ${rel(b, ta.get(t)!)} except all select * from ${rel(b, tb.get(t)!)})`,
        )) +
        (await n(
          (b) =>
            `select count(*) from (select * from ${rel(b, tb.get(t)!)} except all select * from ${rel(b, ta.get(t)!)})`,
        ));
      if (d) out.push(`${t} (${d} rows)`);
    }
  } finally {
    db.close();
  }
  return { tables: out, rows };
}

const current = (dataDir: string) => snapshotDir(dataDir, readManifest(dataDir)!.snapshotId);

describe("nightly append", () => {
  // 40 companies × 2 years; the last five weeks are held back: they hold the December rebalance
  // (1 Dec), a new rating date and new index levels, so every kind of appended row is there.
  let split: Awaited<ReturnType<typeof splitAtDate>>;
  let full: string;
  beforeAll(async () => {
    const src = tmp("append-src-");
    await generateSample(src, { companies: 40, years: 2, vendorRatings: true });
    split = await splitAtDate(src, tmp("append-split-"), "2025-11-26");
    full = tmp("append-full-");
    await run(full, split.appended, { PIPELINE_APPEND: "0" });
  }, 120_000);

  it("publishes the rows a full run gives, computing only the new days", async () => {
    expect(split.rows["prices.csv"]).toBeGreaterThan(40 * 20);
    expect(split.rows["ratings.csv"]).toBeGreaterThan(0);
    const dataDir = tmp("append-");
    await run(dataDir, split.history);
    const first = readManifest(dataDir)!.snapshotId;
    const r = await run(dataDir, split.appended);
    // The append path ran: its own timing, and the new days in files of their own.
    expect(r.meta.timingsMs.append).toBeGreaterThan(0);
    expect(r.meta.timingsMs.ingest).toBeUndefined();
    const dir = current(dataDir);
    expect(readdirSync(join(dir, "prices.days"))).toEqual(["2025-12-31.parquet"]);
    expect(readdirSync(join(dir, "ratings.days"))).toEqual(["2025-12-01.parquet"]);
    const d = await differences(dir, current(full));
    expect(d.tables).toEqual([]);
    expect(d.rows.stock_metrics).toBeGreaterThan(0);
    expect(r.meta.lastPriceDate).toBe("2025-12-31");
    expect(r.meta.counts).toEqual(readMeta(full, readManifest(full)!.snapshotId).counts);
    // The published history is shared, not copied: prices, and the returns' ticker-range parts,
    // beside which the new day's returns are one file.
    expect(statSync(join(dir, "prices.parquet")).ino).toBe(
      statSync(join(snapshotDir(dataDir, first), "prices.parquet")).ino,
    );
    const returnsFiles = (d: string) => readdirSync(join(d, "stock_returns")).sort();
    const parts = returnsFiles(snapshotDir(dataDir, first));
    expect(parts.length).toBeGreaterThan(1);
    expect(returnsFiles(dir)).toEqual(["days-2025-12-31.parquet", ...parts]);
    for (const p of parts)
      expect(statSync(join(dir, "stock_returns", p)).ino).toBe(
        statSync(join(snapshotDir(dataDir, first), "stock_returns", p)).ino,
      );

    // The reader serves the appended days (ratings across the base file and the appended one).
    const [a, b] = await Promise.all([
      SnapshotReader.open(dataDir, readManifest(dataDir)!.snapshotId),
      SnapshotReader.open(full, readManifest(full)!.snapshotId),
    ]);
    try {
      expect(a.ratingDates).toEqual(b.ratingDates);
      expect(a.ratingDates.at(-1)).toBe("2025-12-01");
      const t = a.companies[3].ticker;
      expect(await a.stockReturns(t)).toEqual(await b.stockReturns(t));
      expect(await a.ratingsOn("2025-12-01")).toEqual(await b.ratingsOn("2025-12-01"));
      expect(await a.ratingHistory(t)).toEqual(await b.ratingHistory(t));
      expect(await a.portfolio(b.portfolioIds[0])).toEqual(await b.portfolio(b.portfolioIds[0]));
    } finally {
      a.close();
      b.close();
    }

    // A second night on top of the first: the appended files accumulate, the rows still match.
    const again = await splitAtDate(split.appended, tmp("append-split2-"), "2026-01-01");
    appendFileSync(
      join(again.appended, "prices.csv"),
      readFileSync(join(split.appended, "prices.csv"), "utf8")
        .split("\n")
        .filter((l) => l.startsWith("2025-12-31,"))
        .map((l) => `${l.replace(/^2025-12-31/, "2026-01-02")}\n`)
        .join(""),
    );
    const r2 = await run(dataDir, again.appended);
    expect(r2.meta.timingsMs.append).toBeGreaterThan(0);
    expect(readdirSync(join(current(dataDir), "prices.days"))).toEqual(["2025-12-31.parquet", "2026-01-02.parquet"]);
    // The returns' appended days stay one file, holding both nights.
    expect(returnsFiles(current(dataDir))).toEqual(["days-2026-01-02.parquet", ...parts]);
    const full2 = tmp("append-full2-");
    await run(full2, again.appended, { PIPELINE_APPEND: "0" });
    expect((await differences(current(dataDir), current(full2))).tables).toEqual([]);

    // A portfolio rebalanced on the appended snapshot reads its prices and ratings across the
    // appended files: the same tables as the rebalance of the full run's snapshot.
    const db = await openDuck();
    const pid = (
      await columns(db.conn, "select min(id) from read_parquet($f)", { f: join(current(full2), "portfolios.parquet") })
    )[0][0] as string;
    db.close();
    await rebalanceOne({ dataDir, log: silent, portfolioId: pid });
    await rebalanceOne({ dataDir: full2, log: silent, portfolioId: pid });
    expect((await differences(current(dataDir), current(full2))).tables).toEqual([]);
  }, 180_000);

  it("falls back to a full run when an old row changed, and gives the same rows", async () => {
    const dataDir = tmp("append-edit-");
    await run(dataDir, split.history);
    // One old close edited: the recorded bytes are no longer the file's beginning.
    const f = join(split.appended, "..", "edited");
    cpSync(split.appended, f, { recursive: true });
    const text = readFileSync(join(f, "prices.csv"), "utf8").split("\n");
    const cells = text[5].split(",");
    cells[4] = (Number(cells[4]) * 1.01).toFixed(2);
    text[5] = cells.join(",");
    writeFileSync(join(f, "prices.csv"), text.join("\n"));
    const r = await run(dataDir, f);
    expect(r.meta.timingsMs.ingest).toBeGreaterThan(0);
    expect(r.meta.timingsMs.append).toBeUndefined();
    const other = tmp("append-edit-full-");
    await run(other, f, { PIPELINE_APPEND: "0" });
    expect((await differences(current(dataDir), current(other))).tables).toEqual([]);
  }, 120_000);

  it("rejects bad new rows as a full run does, and keeps the published snapshot", async () => {
    const dataDir = tmp("append-bad-");
    await run(dataDir, split.history);
    const before = readManifest(dataDir)!.snapshotId;
    const f = join(split.appended, "..", "bad");
    cpSync(split.history, f, { recursive: true });
    const ticker = readFileSync(join(f, "prices.csv"), "utf8").split("\n")[1].split(",")[6];
    appendFileSync(join(f, "prices.csv"), `2025-12-31,1,1,1,-5,100,${ticker}\n`);
    const err = await run(dataDir, f).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SourceRejectedError);
    // The report is the full run's: the file's own row number (data rows, the header not counted).
    const rows = readFileSync(join(f, "prices.csv"), "utf8").trimEnd().split("\n").length - 1;
    expect((err as SourceRejectedError).rejects.some((x) => x.row === rows && x.column === "close")).toBe(true);
    expect(readManifest(dataDir)!.snapshotId).toBe(before);
    expect(existsSync(join(f, "prices.csv"))).toBe(true);
  }, 120_000);

  it.skipIf(noRedis)(
    "through BullMQ, is a flow of one job per step and per partition publishing the inline append's bytes",
    async () => {
      // The same published history in both folders (the inline runner's), then the append inline in
      // one and through the queue, on two workers, in the other.
      const inline = tmp("append-inline-");
      const queued = tmp("append-queued-");
      await run(inline, split.history);
      await run(queued, split.history);
      await run(inline, split.appended);
      const catalog = await Catalog.open(join(queued, "catalog.duckdb"));
      const prefix = `${prefixBase}-queue`;
      const completed: string[] = [];
      const log = {
        info: (o: unknown) => {
          if (typeof o === "object" && o !== null && "cpuMs" in o && "job" in o) completed.push(String(o.job));
        },
        warn: () => undefined,
      };
      for (const _ of [1, 2])
        workers.push(startPipelineWorker({ redisUrl: REDIS, dataDir: queued, catalog, log, prefix }));
      const r = await dispatchRun({
        dataDir: queued,
        sourceDir: split.appended,
        catalog,
        log: silent,
        redisUrl: REDIS,
        prefix,
      });
      expect(readMeta(queued, r.snapshotId).timingsMs.append).toBeGreaterThan(0);
      expect(readManifest(queued)!.log![0].job).toMatch(/^publish\./);
      // One stock-metrics job per published returns part, the append's backtest step, the whole steps.
      const parts = readdirSync(join(current(inline), "stock_returns"))
        .filter((f) => f.startsWith("part-"))
        .map((f) => `analytics.tickers-${f.slice(5, 9)}`);
      expect(parts.length).toBeGreaterThan(1);
      const made = completed.map((id) => id.replace(/^([a-z]+)\.[^.]+\./, "$1.")).sort();
      expect(made).toEqual([...parts, "backtest.all", "fundamentals.all", "ingest.all", "publish.all"].sort());
      // Every published file but the meta (ids, times) byte for byte.
      expect(fileHashes(current(queued))).toEqual(fileHashes(current(inline)));
      expect((await differences(current(queued), current(full))).tables).toEqual([]);
    },
    180_000,
  );

  it("appends rows dated inside the history only by a full run", async () => {
    const f = join(split.appended, "..", "late");
    cpSync(split.history, f, { recursive: true });
    // A ticker's row for a day already published (a late correction), appended at the end.
    const lines = readFileSync(join(split.history, "prices.csv"), "utf8").trimEnd().split("\n");
    const last = lines.at(-1)!.split(",");
    const day = lines.map((l) => l.split(",")).find((c) => c[6] === last[6] && c[0] < last[0] && c[0] > "2025-01-01")!;
    const moved = lines.filter((l) => l !== day.join(","));
    writeFileSync(join(f, "prices.csv"), `${moved.join("\n")}\n`);
    cpSync(f, join(f, "..", "late-history"), { recursive: true });
    const base = tmp("append-old-base-");
    await run(base, f);
    appendFileSync(join(f, "prices.csv"), `${day.join(",")}\n`);
    const r = await run(base, f);
    expect(r.meta.timingsMs.append).toBeUndefined();
    const other = tmp("append-old-full-");
    await run(other, f, { PIPELINE_APPEND: "0" });
    expect((await differences(current(base), current(other))).tables).toEqual([]);

    // Through the queue the flow's ingest finds the same and goes on as a full run in that flow: its
    // fundamentals job (which leaves an append's to ingest) left the fundamentals to it.
    if (noRedis) return;
    const queued = tmp("append-old-queued-");
    await run(queued, join(f, "..", "late-history"));
    const catalog = await Catalog.open(join(queued, "catalog.duckdb"));
    const prefix = `${prefixBase}-late`;
    const messages: string[] = [];
    const log = { info: (_o: unknown, msg?: string) => void messages.push(msg ?? ""), warn: () => undefined };
    for (const _ of [1, 2])
      workers.push(startPipelineWorker({ redisUrl: REDIS, dataDir: queued, catalog, log, prefix }));
    const q = await dispatchRun({ dataDir: queued, sourceDir: f, catalog, log: silent, redisUrl: REDIS, prefix });
    expect(readMeta(queued, q.snapshotId).timingsMs.append).toBeUndefined();
    expect(readManifest(queued)!.log![0].job).toMatch(/^publish\./);
    expect(messages).toContain("a nightly append: the fundamentals are left to its ingest");
    expect(messages).toContain("the source does not continue the published snapshot: full run");
    expect(messages.filter((m) => m.startsWith("fundamentals ")).length).toBe(1);
    expect((await differences(current(queued), current(other))).tables).toEqual([]);
  }, 180_000);
});
