// `npm run bench -- ratings` (issue 42): the factor model's cost beside the price proxies it replaced,
// both measured in the same run.
//   1. the real S&P 500 source (../shared/data/real-source without its ratings.csv): the model's stage
//      (statements read, factors, scores, ratings and rating_components written to Parquet) against
//      the proxies' (pipeline/ratings/computed.ts, its ratings written the same way), in this process;
//   2. RATINGS_SOURCE=/path (a source without ratings.csv, e.g. `npm run generate -- --companies 5000
//      --years 25`; absent: a generated 300 × 8 sample): two whole runs, each a child process with its
//      own peak RSS: the source as it is (the model rates it) and the same source given the proxies'
//      ratings as its ratings.csv (the run computes none). The difference is what the model adds.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { generateSample } from "../data/generate.ts";
import { ChunkWriter } from "../data/generator/write.ts";
import { computeRatings } from "../pipeline/ratings/computed.ts";
import { stageSource } from "../pipeline/sources/index.ts";
import { loadCompanies, loadPanel } from "../pipeline/stages/frames.ts";
import { modelRatingsStage } from "../pipeline/stages/model-ratings.ts";
import { type Conn, openDuck } from "../pipeline/store/duck/duck.ts";
import { appendTable, exportParquetFile } from "../pipeline/store/duck/write.ts";
import { type Company, type PricePanel, RATING_NAMES, type RatingRow } from "../pipeline/types.ts";
import { SHARED_DATA } from "./real-source.ts";

const CHILD = resolve(import.meta.dirname, "scale-child.ts");
const TSX = resolve(import.meta.dirname, "../node_modules/.bin/tsx");
const silent = { info: () => undefined, warn: () => undefined };
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** `from` linked file by file into a new folder, leaving out ratings.csv (no copy of the data). */
function withoutRatings(from: string, to: string): string {
  rmSync(to, { recursive: true, force: true });
  mkdirSync(to, { recursive: true });
  for (const f of readdirSync(from)) if (f !== "ratings.csv") symlinkSync(join(from, f), join(to, f));
  return to;
}

/** The source's staged price panel and companies (ids as ingest would give them aside). */
async function market(conn: Conn, dir: string): Promise<{ panel: PricePanel; companies: Company[] }> {
  const staged = await stageSource(conn, dir);
  if (staged.rejectCount) throw new Error(`source rejected: ${staged.rejects[0]?.reason}`);
  await conn.run(
    "create or replace table companies as select coalesce(id, ticker) id, ticker, name, sector, 0 sector_id, " +
      "industry, 0 industry_id, shares_outstanding, market_cap from companies",
  );
  return { panel: await loadPanel(conn), companies: await loadCompanies(conn) };
}

/** The proxies' stage as it was: ratings computed from prices, written as ratings.parquet. */
async function proxiesStage(conn: Conn, out: string, m: { panel: PricePanel; companies: Company[] }) {
  const ratings = computeRatings(m.panel, m.companies);
  await appendTable(
    conn,
    "ratings",
    [["date", "date"], ["ticker", "varchar"], ...RATING_NAMES.map((n): [string, "double"] => [n, "double"])],
    ratings.map((r) => [r.date, r.ticker, ...RATING_NAMES.map((n) => r[n])]),
  );
  await exportParquetFile(conn, "ratings", join(out, "ratings.parquet"), ["date"], "date, ticker");
  return ratings;
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

async function realSource(): Promise<void> {
  const real = join(SHARED_DATA, "real-source");
  if (!existsSync(join(real, "prices.csv"))) {
    console.log("real source: skipped (no ../shared/data/real-source)");
    return;
  }
  const tmp = mkdtempSync(join(tmpdir(), "bench-ratings-"));
  const db = await openDuck();
  try {
    const src = withoutRatings(real, join(tmp, "src"));
    const m = await market(db.conn, src);
    const out = join(tmp, "out");
    mkdirSync(out);
    const proxies: number[] = [];
    const model: number[] = [];
    for (let i = 0; i < 3; i++) {
      proxies.push(await timed(() => proxiesStage(db.conn, out, m)));
      const frames = { ...m, ratings: [] as RatingRow[] };
      model.push(await timed(() => modelRatingsStage({ conn: db.conn, out, log: silent }, frames, src)));
    }
    console.log(
      `real source (${m.panel.tickers.length} stocks × ${m.panel.dates.length} days, SimFin annual statements): ` +
        `model stage ${median(model).toFixed(0)} ms (target < 1,000); price proxies ${median(proxies).toFixed(0)} ms ` +
        `(baseline, same run; medians of 3)`,
    );
  } finally {
    db.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** `dir` beside `src`: the same files, and the proxies' ratings as its ratings.csv. */
async function withProxyRatings(src: string, dir: string): Promise<void> {
  withoutRatings(src, dir);
  const db = await openDuck();
  try {
    const m = await market(db.conn, src);
    const ratings = computeRatings(m.panel, m.companies);
    const w = await ChunkWriter.create(join(dir, "ratings.csv"));
    w.line(`date,ticker,${RATING_NAMES.join(",")}`);
    for (const r of ratings) w.line(`${r.date},${r.ticker},${RATING_NAMES.map((n) => r[n].toFixed(4)).join(",")}`);
    await w.close();
  } finally {
    db.close();
  }
}

function run(source: string, data: string): { ms: number; peakMB: number } {
  rmSync(data, { recursive: true, force: true });
  mkdirSync(data, { recursive: true });
  const out = execFileSync(TSX, [CHILD, "run", source, data], { encoding: "utf8", maxBuffer: 1 << 24 });
  return JSON.parse(out.trim().split("\n").at(-1)!);
}

async function wholeRuns(): Promise<void> {
  const tmp = mkdtempSync(join(tmpdir(), "bench-ratings-runs-"));
  try {
    let src = process.env.RATINGS_SOURCE;
    if (!src) {
      src = join(tmp, "sample");
      await generateSample(src, { companies: 300, years: 8 });
    }
    if (existsSync(join(src, "ratings.csv"))) src = withoutRatings(src, join(tmp, "model-src"));
    const proxies = join(tmp, "proxies-src");
    await withProxyRatings(src, proxies);
    // the compiled runner, as `npm run pipeline` runs it
    execFileSync(process.execPath, [resolve(import.meta.dirname, "../scripts/dist-fresh.mjs")], { stdio: "inherit" });
    const base = run(proxies, join(tmp, "data-proxies"));
    const model = run(src, join(tmp, "data-model"));
    const pct = (100 * (model.ms - base.ms)) / base.ms;
    console.log(
      `whole runs of ${src}: the model ${(model.ms / 1000).toFixed(1)} s, peak ${model.peakMB} MB; ` +
        `with the proxies' ratings as ratings.csv (baseline) ${(base.ms / 1000).toFixed(1)} s, peak ${base.peakMB} MB; ` +
        `the model adds ${((model.ms - base.ms) / 1000).toFixed(1)} s (${pct.toFixed(1)} %, target < 10 %) and ` +
        `${model.peakMB - base.peakMB} MB to the peak (target < 300)`,
    );
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

export async function benchRatings(): Promise<void> {
  console.log("\n== ratings (issue 42): the factor model beside the price proxies, same run");
  await realSource();
  await wholeRuns();
}
