// `npm run bench -- web`: the web app in headless Chromium. (1) The first load's compressed bytes
// (the page, its script and stylesheet, as Chromium asks for them: br), beside /docs (Redoc) as the
// baseline. (2) A stock tearsheet with all its charts drawn after an in-app navigation, from the
// page's performance marks (tearsheet-start → tearsheet-done), beside the baseline of the same
// API reads made from Node (the API's part of that time). Cold: each ticker's first view (series are
// computed on first request); warm: the same ticker again.
//   BENCH_STORE=DIR serves that published store (e.g. the real source, published with
//   `DATA_DIR=DIR npm run pipeline -- run --source ../shared/data/real-source`); default: a 500 × 15
//   fixture snapshot. WEB_BENCH_TICKERS (default 5) tickers are viewed.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { createApp } from "../api/app.ts";
import { ReaderSource } from "../api/resources/reader-source.ts";
import { createLogger } from "../jobs/logger.ts";
import { alignBenchmark, metricRows } from "../pipeline/analytics/index.ts";
import { SnapshotReader } from "../pipeline/store/read/snapshot-reader.ts";
import { metricsKey, type Snapshot } from "../pipeline/store/snapshot/model.ts";
import { readManifest } from "../pipeline/store/snapshot/snapshots.ts";
import { buildCatalog, buildFixture, KEYS } from "../test/api/fixture.ts";
import { CHROMIUM, launch, present, signIn } from "../test/web/browser.ts";

const N = Number(process.env.WEB_BENCH_TICKERS ?? 5);

async function serve() {
  const fx = buildFixture({ stocks: 500, days: 15 * 252, seed: 11, id: "bench-web" });
  const store = process.env.BENCH_STORE;
  const lazy = store ? new ReaderSource(await SnapshotReader.open(store, readManifest(store)!.snapshotId)) : null;
  const tickers = (lazy ? lazy.reader.companies : fx.snapshot.companies).slice(0, N).map((c) => c.ticker);
  if (!lazy)
    for (const t of tickers) {
      // stored metric rows, as the pipeline writes them
      const r = fx.snapshot.stockReturns.get(t)!;
      const bench = {
        name: fx.snapshot.benchmarks[0].name,
        returns: alignBenchmark(r.dates, fx.snapshot.benchmarks[0].levels),
      };
      fx.snapshot.metrics.set(metricsKey("stock", t, "1"), metricRows(r, t, bench));
    }
  const app = createApp({
    snapshot: () => lazy ?? (fx.snapshot as Snapshot),
    catalog: buildCatalog(fx),
    logger: createLogger("silent", new Writable({ write: (_c, _e, cb) => cb() })),
    rateLimit: { points: 1e9, durationSec: 60 },
  });
  const server = http.createServer(app);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    server,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    tickers,
    label: store ?? "fixture 500 × 15",
  };
}

/** Bytes on the wire (compressed) of a GET with Accept-Encoding `enc`. */
function wireBytes(url: string, enc: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers: { "accept-encoding": enc } }, (res) => {
        let n = 0;
        res.on("data", (c: Buffer) => (n += c.length));
        res.on("end", () => resolve(n));
      })
      .on("error", reject);
  });
}

async function sizes(url: string): Promise<void> {
  const sum = async (paths: string[], enc: string) =>
    (await Promise.all(paths.map((p) => wireBytes(url + p, enc)))).reduce((a, b) => a + b, 0);
  const app = ["/", "/web/app.js", "/web/app.css"];
  const docs = ["/docs", "/docs/redoc.standalone.js"];
  const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
  console.log("first load (page + script + stylesheet)    br          gzip        identity");
  for (const [name, paths] of [
    ["web app /", app],
    ["baseline: /docs (Redoc)", docs],
  ] as const) {
    const [br, gz, id] = [
      await sum([...paths], "br"),
      await sum([...paths], "gzip"),
      await sum([...paths], "identity"),
    ];
    console.log(`${name.padEnd(42)} ${kb(br).padEnd(11)} ${kb(gz).padEnd(11)} ${kb(id)}`);
  }
}

/** The API reads a stock tearsheet makes, from Node, in parallel: the API's share of the time. */
async function apiOnly(url: string, t: string): Promise<number> {
  const types = ["cumulative_return", "drawdown", "monthly_heatmap", "yearly_returns", "histogram"];
  types.push("rolling_beta", "rolling_volatility", "rolling_sharpe", "boxplot");
  const get = (p: string) =>
    fetch(`${url}/data/v1/${p}`, { headers: { api_key: KEYS.alice } }).then((r) => r.arrayBuffer());
  const t0 = performance.now();
  await Promise.all([
    get("benchmarks"),
    get(`stock_ratings/${t}`),
    get(`stock_metrics/${t}?benchmark=1`),
    ...types.map((ty) => get(`stock_performance/${t}?type=${ty}&benchmark=1`)),
  ]);
  return performance.now() - t0;
}

const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export async function benchWeb(): Promise<void> {
  if (!present) {
    console.log(`web: skipped, no chromium at ${CHROMIUM} (apt-get install chromium)`);
    return;
  }
  const s = await serve();
  console.log(`\n== web (${s.label})`);
  await sizes(s.url);
  const browser = await launch();
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await signIn(page, s.url, KEYS.alice);
    await page.evaluate("performance.setResourceTimingBufferSize(100000)"); // the default keeps 250 entries
    const view = async (t: string) => {
      await page.evaluate((h) => {
        location.hash = h;
      }, "#/");
      await page.locator("main[data-state=ready]").waitFor();
      await page.evaluate(
        (h) => {
          location.hash = h;
        },
        `#/stock/${encodeURIComponent(t)}`,
      );
      await page.locator("main[data-state=ready]").waitFor({ timeout: 60_000 });
      // a string, not a function: tsx would wrap a named arrow in a helper the page does not have
      const t0 = "performance.getEntriesByName('tearsheet-start').at(-1).startTime";
      const done = "performance.getEntriesByName('tearsheet-done').at(-1).startTime";
      const total = `${done} - ${t0}`;
      // the last API response's end (of the reads started before the end): the rest is the page's own work
      const net = `Math.max(...performance.getEntriesByType('resource')
        .filter((e) => e.startTime >= ${t0} && e.startTime <= ${done}).map((e) => e.responseEnd)) - ${t0}`;
      return page.evaluate(`[${total}, ${net}]`) as Promise<[number, number]>;
    };
    const rows: { t: string; cold: number; warm: number; net: number; api: number }[] = [];
    for (const t of s.tickers) {
      const [cold] = await view(t);
      const [warm, net] = await view(t);
      rows.push({ t, cold, warm, net, api: await apiOnly(s.url, t) });
    }
    console.log("stock tearsheet, all charts drawn (ms)    cold     warm  warm: last response  API reads from Node");
    const line = (name: string, ...v: number[]) =>
      console.log(`${name.padEnd(38)} ${v.map((x, i) => x.toFixed(0).padStart(i < 2 ? 8 : 20)).join(" ")}`);
    for (const r of rows) line(r.t, r.cold, r.warm, r.net, r.api);
    const m = (k: "cold" | "warm" | "net" | "api") => med(rows.map((r) => r[k]));
    line("median", m("cold"), m("warm"), m("net"), m("api"));
  } finally {
    await browser.close();
    s.server.close();
  }
}
