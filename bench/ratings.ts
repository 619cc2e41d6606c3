// `npm run bench -- ratings` (issue 42): the factor model's cost beside the price proxies it replaced,
// both measured in the same run.
//   1. the real S&P 500 source (REAL_SOURCE, default ../shared/data/real-source, without its ratings.csv):
//      the model's stage (statements read, factors, scores, ratings and rating_components to Parquet) against
//      the proxies' (pipeline/ratings/computed.ts, its ratings written the same way), in this process;
//   2. RATINGS_SOURCE=/path (e.g. `npm run generate -- --companies 5000 --years 25`; absent: a generated
//      300 × 8 sample; a ratings.csv is left out): a whole run (the model rating it) for its wall and peak,
//      then each stage alone on the run's price panel in a process of its own (bench/ratings-child.ts):
//      the model's time and peak beside the proxies' are what it adds to the run.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { generateSample } from "../data/generate.ts";
import { stageSource } from "../pipeline/sources/index.ts";
import { loadCompanies, loadPanel } from "../pipeline/stages/frames.ts";
import { type Conn, openDuck } from "../pipeline/store/duck/duck.ts";
import { appendTable, exportParquetFile } from "../pipeline/store/duck/write.ts";
import { type Company, type PricePanel, RATING_NAMES, type RatingRow } from "../pipeline/types.ts";
import { computeRatings, modelRatingsStage } from "./ratings-stages.ts";
import { SHARED_DATA } from "./real-source.ts";

const SCALE_CHILD = resolve(import.meta.dirname, "scale-child.ts");
const STAGE_CHILD = resolve(import.meta.dirname, "ratings-child.ts");
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
export async function market(conn: Conn, dir: string): Promise<{ panel: PricePanel; companies: Company[] }> {
  const staged = await stageSource(conn, dir);
  if (staged.rejectCount) throw new Error(`source rejected: ${staged.rejects[0]?.reason}`);
  await conn.run(
    "create or replace table companies as select coalesce(id, ticker) id, ticker, name, sector, 0 sector_id, " +
      "industry, 0 industry_id, shares_outstanding, market_cap from companies",
  );
  return { panel: await loadPanel(conn), companies: await loadCompanies(conn) };
}

/** The proxies' stage as it was: ratings computed from prices, written as ratings.parquet. */
export async function proxiesStage(
  conn: Conn,
  out: string,
  m: { panel: PricePanel; companies: Company[] },
  compute = computeRatings,
) {
  const ratings = compute(m.panel, m.companies);
  await appendTable(
    conn,
    "ratings",
    [["date", "date"], ["ticker", "varchar"], ...RATING_NAMES.map((n): [string, "double"] => [n, "double"])],
    ratings.map((r) => [r.date, r.ticker, ...RATING_NAMES.map((n) => r[n])]),
  );
  await exportParquetFile(conn, "ratings", join(out, "ratings.parquet"), ["date"], "date, ticker");
  return ratings;
}

/** Wall ms, and this process's CPU ms (steadier on a shared machine), of `fn`. */
async function timed(fn: () => Promise<unknown>): Promise<[number, number]> {
  const t = performance.now();
  const cpu = process.cpuUsage();
  await fn();
  const used = process.cpuUsage(cpu);
  return [performance.now() - t, (used.user + used.system) / 1000];
}

export async function realSource(): Promise<void> {
  const real = process.env.REAL_SOURCE ?? join(SHARED_DATA, "real-source");
  if (!existsSync(join(real, "prices.csv"))) {
    console.log(`real source: skipped (no ${real}; REAL_SOURCE=/path names one)`);
    return;
  }
  const tmp = mkdtempSync(join(tmpdir(), "bench-ratings-"));
  const db = await openDuck();
  try {
    const src = withoutRatings(real, join(tmp, "src"));
    const m = await market(db.conn, src);
    const out = join(tmp, "out");
    mkdirSync(out);
    const proxies: [number, number][] = [];
    const model: [number, number][] = [];
    for (let i = 0; i < 3; i++) {
      proxies.push(await timed(() => proxiesStage(db.conn, out, m)));
      const frames = { ...m, ratings: [] as RatingRow[] };
      model.push(await timed(() => modelRatingsStage({ conn: db.conn, out, log: silent }, frames, src)));
    }
    const ms = (xs: [number, number][]) =>
      `${median(xs.map((x) => x[0])).toFixed(0)} ms (CPU ${median(xs.map((x) => x[1])).toFixed(0)} ms)`;
    console.log(
      `real source (${m.panel.tickers.length} stocks × ${m.panel.dates.length} days, SimFin annual statements): ` +
        `model stage ${ms(model)} (target < 1 s); price proxies ${ms(proxies)} (baseline, same run; medians of 3)`,
    );
  } finally {
    db.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}

function child(script: string, args: string[]): Record<string, number> {
  const out = execFileSync(TSX, [script, ...args], { encoding: "utf8", maxBuffer: 1 << 24 });
  return JSON.parse(out.trim().split("\n").at(-1)!);
}

export async function wholeRun(): Promise<void> {
  const tmp = mkdtempSync(join(tmpdir(), "bench-ratings-runs-"));
  try {
    let src = process.env.RATINGS_SOURCE;
    if (!src) {
      src = join(tmp, "sample");
      await generateSample(src, { companies: 300, years: 8 });
    }
    if (existsSync(join(src, "ratings.csv"))) src = withoutRatings(src, join(tmp, "model-src"));
    const data = join(tmp, "data");
    mkdirSync(data);
    const run = child(SCALE_CHILD, ["run", src, data]);
    const proxies = child(STAGE_CHILD, [src, "proxies"]);
    const model = child(STAGE_CHILD, [src, "model"]);
    const added = model.ms - proxies.ms;
    const addedCpu = model.cpuMs - proxies.cpuMs;
    const sec = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    const grow = (r: Record<string, number>) => r.peakMB - r.peakBeforeMB;
    console.log(
      `${src}: a whole run (the model rating it) ${sec(run.ms)} (CPU ${sec(run.cpuMs)}), peak ${run.peakMB} MB. ` +
        `Stages on the run's price panel, each in its own process: the model ${sec(model.ms)} ` +
        `(CPU ${sec(model.cpuMs)}), the price proxies ${sec(proxies.ms)} (CPU ${sec(proxies.cpuMs)}; baseline): ` +
        `the model adds ${sec(added)} = ${((100 * added) / run.ms).toFixed(1)} % of the run's wall ` +
        `(CPU ${sec(addedCpu)} = ${((100 * addedCpu) / run.cpuMs).toFixed(1)} % of its CPU; target < 10 %); ` +
        `the peak grows ${grow(model)} MB in the model's stage, ${grow(proxies)} MB in the proxies': ` +
        `${grow(model) - grow(proxies)} MB more (target < 300)`,
    );
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

export async function benchRatings(): Promise<void> {
  console.log("\n== ratings (issue 42): the factor model beside the price proxies, same run");
  await realSource();
  await wholeRun();
}
