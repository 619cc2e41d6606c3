// A window's read beside the precomputed full-period read (issue #41 item 1): per request, one
// stock's metric table against a benchmark — the stored full-period rows, then a 10-year window
// computed at read time from the snapshot's daily returns (the same functions), then the window's
// cumulative_return series — through the lazy reader the server uses (SnapshotReader + ReaderSource),
// each request for the next ticker (so the returns are read from the Parquet part, not a hot cache).
// Target: p50 < 20 ms for the 10-year window.
//   npx tsx bench/window.ts            BENCH_STOCKS (default 100) × BENCH_YEARS (default 25), generated
//   BENCH_STORE=DIR npx tsx bench/window.ts      a published store instead (e.g. the 5,000 × 25 one)
import { benchmarkOf, metricsOf, seriesOf, stockReturnsOf, stockSubject } from "../api/resources/analytics.ts";
import { ReaderSource } from "../api/resources/reader-source.ts";
import { companies } from "../api/resources/snapshot-access.ts";
import { SnapshotReader } from "../pipeline/store/read/snapshot-reader.ts";
import { readManifest, readMeta } from "../pipeline/store/snapshot/snapshots.ts";
import { generatedStore } from "../test/store/published.ts";
import { runIfMain } from "./script.ts";

const STOCKS = Number(process.env.BENCH_STOCKS ?? 100);
const YEARS = Number(process.env.BENCH_YEARS ?? 25);
const CALLS = Number(process.env.BENCH_CALLS ?? 300);

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor(q * (xs.length - 1))];

async function store(): Promise<{ dataDir: string; id: string }> {
  const given = process.env.BENCH_STORE;
  if (given) return { dataDir: given, id: readManifest(given)!.snapshotId };
  const t = performance.now();
  const s = await generatedStore({ companies: STOCKS, years: YEARS, seed: 11 });
  const id = await s.run();
  console.log(`generated and published ${STOCKS} x ${YEARS} years in ${((performance.now() - t) / 1000).toFixed(0)} s`);
  return { dataDir: s.dataDir, id };
}

async function bench(): Promise<void> {
  const { dataDir, id } = await store();
  const reader = await SnapshotReader.open(dataDir, id, { cacheEntries: 8 });
  const src = new ReaderSource(reader);
  const all = await companies(src);
  const bench = await benchmarkOf(src, reader.benchmarks[0]?.id);
  const last = readMeta(dataDir, id).lastPriceDate;
  const start = `${Number(last.slice(0, 4)) - 10}${last.slice(4)}`;
  const cases: [string, (i: number) => Promise<unknown>][] = [
    ["full period (stored rows)", async (i) => metricsOf(src, await subjectAt(i), bench, {})],
    [`10-year window from ${start} (computed)`, async (i) => metricsOf(src, await subjectAt(i), bench, { start })],
    [
      "10-year window, cumulative_return series",
      async (i) => seriesOf("cumulative_return", "x", (await subjectAt(i)).returns, bench, { start }),
    ],
  ];
  async function subjectAt(i: number) {
    return stockSubject(all[i % all.length], stockReturnsOf(src));
  }
  for (const [label, f] of cases) {
    for (let i = 0; i < 20; i++) await f(i); // warm-up
    const xs: number[] = [];
    for (let i = 0; i < CALLS; i++) {
      const t = performance.now();
      await f(i + 20);
      xs.push(performance.now() - t);
    }
    console.log(
      `${label}: p50 ${quantile(xs, 0.5).toFixed(2)} ms, p95 ${quantile(xs, 0.95).toFixed(2)} ms (${CALLS} calls, ` +
        `${all.length} stocks in rotation)`,
    );
  }
  reader.close();
}

await runIfMain(import.meta.url, async () => undefined, bench);
