// Bulk exports (/data/v1/export/{table}) over a published snapshot (a generated 20-company source
// through a real pipeline run) served by the lazy reader, as the server holds it. The expected
// values are the JSON endpoints' answers on the same snapshot and DuckDB's own reading of the
// snapshot's Parquet; apache-arrow reads the streams, DuckDB the Parquet downloads.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Table, tableFromIPC } from "apache-arrow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReaderSource } from "../../api/resources/reader-source.ts";
import { configureExports } from "../../api/rest/export.ts";
import { loadConfig } from "../../jobs/config.ts";
import { openDuck, rows } from "../../pipeline/store/duck/duck.ts";
import { SnapshotReader } from "../../pipeline/store/read/snapshot-reader.ts";
import { snapshotDir } from "../../pipeline/store/snapshot/snapshots.ts";
import { sampleStore } from "../sample.ts";
import { KEYS } from "./fixture.ts";
import { startTestServer, type TestServer } from "./helpers.ts";

// biome-ignore lint/suspicious/noExplicitAny: JSON bodies, read by path and asserted on
type J = any;

let srv: TestServer;
let reader: SnapshotReader;
let dir: string;
let db: Awaited<ReturnType<typeof openDuck>>;

beforeAll(async () => {
  const { dataDir, id } = sampleStore();
  dir = snapshotDir(dataDir, id);
  reader = await SnapshotReader.open(dataDir, id, { cacheEntries: 8 });
  srv = await startTestServer({ deps: { snapshot: () => new ReaderSource(reader) } });
  db = await openDuck();
}, 120_000);
afterAll(async () => {
  await srv?.close();
  reader?.close();
  db?.close();
});

interface Got {
  status: number;
  headers: Headers;
  bytes: Buffer;
}

async function get(path: string, params: Record<string, string> = {}, key: string = KEYS.alice, headers = {}) {
  const u = new URL(`${srv.url}/data/v1/${path}`);
  for (const [k, v] of Object.entries({ api_key: key, ...params })) u.searchParams.set(k, v);
  const r = await fetch(u, { headers });
  return { status: r.status, headers: r.headers, bytes: Buffer.from(await r.arrayBuffer()) } satisfies Got;
}
const json = (g: Got) => JSON.parse(g.bytes.toString("utf8"));
const exportTable = async (table: string, params: Record<string, string> = {}, key?: string) => {
  const g = await get(`export/${table}`, params, key);
  expect(g.status, g.bytes.toString("utf8").slice(0, 300)).toBe(200);
  expect(g.headers.get("content-type")).toBe("application/vnd.apache.arrow.stream");
  return tableFromIPC(g.bytes);
};
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const rowsOf = (t: Table) => t.toArray().map((r) => r.toJSON() as Record<string, unknown>);

describe("export: Arrow streams equal the JSON endpoints on the same snapshot", () => {
  it("stock_returns of a ticker: its cumulative_return series compounds them, typed date32/float64", async () => {
    const c = reader.companies[3];
    const t = await exportTable("stock_returns", { tickers: c.ticker.toLowerCase() });
    expect(t.schema.fields.map((f) => `${f.name}:${f.type}`)).toEqual(["id:Utf8", "date:Date32<DAY>", "ret:Float64"]);
    const series = json(await get(`stock_performance/${c.ticker}`, { type: "cumulative_return" }))[0].data as {
      date: string;
      return: number;
    }[];
    const got = rowsOf(t);
    expect(got.every((r) => r.id === c.ticker)).toBe(true);
    expect(got[0].ret).toBe(0); // a stock's first stored return is the 0.0 start
    // cumulative return of a day: the product of (1 + r) up to it, minus 1 (hand definition)
    const cum = new Map<string, number>();
    let p = 1;
    for (const r of got) {
      p *= 1 + (r.ret as number);
      cum.set(day(r.date as number), p - 1);
    }
    expect(series.length).toBeGreaterThanOrEqual(got.length - 1);
    for (const d of series) expect(cum.get(d.date), d.date).toBeCloseTo(d.return, 10);
  });

  it("ratings of the last rating date: the stock_ratings list's values as doubles", async () => {
    const last = reader.ratingDates.at(-1)!;
    const t = await exportTable("ratings", { start_date: last, end_date: last });
    const list = json(await get("stock_ratings", { order_by: "ticker", limit: "200" })) as Record<string, J>[];
    expect(list.length).toBeGreaterThan(5);
    const byTicker = new Map(rowsOf(t).map((r) => [r.ticker as string, r]));
    expect(byTicker.size).toBe(list.length);
    for (const item of list) {
      const r = byTicker.get(item.stock.ticker)!;
      expect(day(r.date as number)).toBe(item.date);
      // the JSON publishes each rating with four decimals (contract): the stored double to 4 places
      expect((r.total_rating as number | null)?.toFixed(4) ?? null).toBe(item.totalRating);
      expect((r.growth_rating as number | null)?.toFixed(4) ?? null).toBe(item.growthRating);
    }
  });

  it("stock_metrics: each stored row's display is the JSON table's cell, in the same order", async () => {
    const c = reader.companies[7];
    const t = await exportTable("stock_metrics", { tickers: c.ticker, columns: "benchmark,metric,display,value" });
    expect(t.schema.fields.map((f) => f.name)).toEqual(["benchmark", "metric", "display", "value"]);
    const plain = rowsOf(t).filter((r) => r.benchmark === null);
    const table = json(await get(`stock_metrics/${c.ticker}`)) as Record<string, string>[];
    expect(plain.map((r) => [r.metric, r.display])).toEqual(table.map((r) => [r.metric, r[c.ticker]]));
  });

  it("financial_income: the annual rows of stock_financials, Fiscal Year int32 and Report Date date32", async () => {
    const c = reader.companies[0];
    const t = await exportTable("financial_income", { tickers: c.ticker });
    const types = Object.fromEntries(t.schema.fields.map((f) => [f.name, String(f.type)]));
    expect([types["Fiscal Year"], types["Report Date"], types.Revenue]).toEqual(["Int32", "Date32<DAY>", "Float64"]);
    const body = json(await get(`stock_financials/${c.ticker}`, { type: "annual" }));
    const annual = rowsOf(t).filter((r) => r.type === "annual");
    const want = body.stockIncomeAnnualData as Record<string, unknown>[];
    expect(want.length).toBeGreaterThan(0);
    expect(annual.map((r) => [r["Fiscal Year"], day(r["Report Date"] as number), r.Revenue])).toEqual(
      want.map((r) => [r["Fiscal Year"], r["Report Date"], r.Revenue]),
    );
  });

  it("portfolio_holdings: the rebalance rows of a predefined portfolio as /portfolio_holdings lists them", async () => {
    const pid = reader.predefinedIds[0];
    const t = await exportTable("portfolio_holdings", { columns: "portfolio_id,kind,date,ticker" });
    const mine = rowsOf(t).filter((r) => r.portfolio_id === pid && r.kind === "rebalance");
    const lastDate = Math.max(...mine.map((r) => r.date as number));
    const held = mine.filter((r) => r.date === lastDate).map((r) => r.ticker as string);
    const page = json(await get(`portfolio_holdings/${pid}`, { limit: "200" })) as Record<string, J>[];
    expect(held.sort()).toEqual(page.map((h) => h.stock.ticker).sort());
    expect(new Set(page.map((h) => h.date))).toEqual(new Set([day(lastDate)]));
  });

  it("every table streams all its rows: counts and a checksum equal DuckDB's over the snapshot", async () => {
    const checks: [string, string, string][] = [
      ["prices", "prices.parquet", "close"],
      ["stock_returns", "stock_returns/*.parquet", "ret"],
      ["portfolio_returns", "portfolio_returns.parquet", "ret"],
    ];
    for (const [table, files, col] of checks) {
      const t = await exportTable(table);
      const [want] = await rows<{ n: bigint; s: number }>(
        db.conn,
        `select count(*) as n, sum("${col}") as s from read_parquet($f)`,
        { f: join(dir, files) },
      );
      const values = t.getChild(col)!.toArray() as Float64Array;
      let s = 0;
      for (let i = 0; i < values.length; i++) if (t.getChild(col)!.isValid(i)) s += values[i];
      expect([table, t.numRows]).toEqual([table, Number(want.n)]);
      expect(s).toBeCloseTo(want.s, 6);
    }
  });
});

describe("export: batches", () => {
  it("several record batches or one, or per-ticker filters: the same rows in the same order", async () => {
    const one = await exportTable("stock_returns");
    // 300 more columns: batches of 2,048 rows (export-reads.ts batchRows), so the stream holds several
    const wide = new URL(`${srv.url}/data/v1/export/stock_returns`);
    for (const c of ["id", "date", "ret", ...Array.from({ length: 300 }, () => "ret")])
      wide.searchParams.append("columns", c);
    wide.searchParams.set("api_key", KEYS.alice);
    const many = tableFromIPC(Buffer.from(await (await fetch(wide)).arrayBuffer()));
    expect(one.batches.length).toBe(1);
    expect(many.batches.length).toBe(Math.ceil(one.numRows / 2048));
    expect(many.numCols).toBe(303);
    const cols = (t: Table) =>
      ["id", "date", "ret"].map((c) => [...t.getChildAt(t.schema.fields.findIndex((f) => f.name === c))!]);
    expect(cols(many)).toEqual(cols(one));
    expect([...many.getChildAt(302)!]).toEqual([...one.getChild("ret")!]);
    // every ticker on its own, concatenated in ticker order: the unfiltered stream
    const byTicker = [];
    for (const c of [...reader.companies].sort((a, b) => (a.ticker < b.ticker ? -1 : 1)))
      byTicker.push(...rowsOf(await exportTable("stock_returns", { tickers: c.ticker })));
    expect(byTicker).toEqual(rowsOf(one));
  });
});

describe("export: Parquet", () => {
  it("an unfiltered single-file table is the snapshot's own file; filtered, DuckDB writes the same rows", async () => {
    const own = await get("export/prices", { format: "parquet" });
    expect(own.status).toBe(200);
    expect(own.headers.get("content-type")).toBe("application/vnd.apache.parquet");
    expect(own.bytes.equals(readFileSync(join(dir, "prices.parquet")))).toBe(true);
    expect(Number(own.headers.get("content-length"))).toBe(own.bytes.length);
    // every ticker named: the same rows, written by DuckDB (COPY here writes the very bytes the pipeline did)
    const all = reader.companies.map((c) => c.ticker).join(",");
    const written = await get("export/prices", { format: "parquet", tickers: all });
    expect(written.status).toBe(200);
    const tmp = mkdtempSync(join(tmpdir(), "export-whole-"));
    const read = async (bytes: Buffer, name: string) => {
      writeFileSync(join(tmp, name), bytes);
      return rows<Record<string, unknown>>(db.conn, "select * from read_parquet($f)", { f: join(tmp, name) });
    };
    const a = await read(own.bytes, "own.parquet");
    const b = await read(written.bytes, "written.parquet");
    expect(a.length).toBeGreaterThan(1000);
    expect(b).toEqual(a);
    // a column subset or a stream folder of several files is written, not served whole
    const some = await get("export/prices", { format: "parquet", columns: "ticker,date" });
    expect(some.bytes.equals(own.bytes)).toBe(false);
  });

  it("DuckDB reads the download: the filtered rows of the table, the asked columns in order", async () => {
    const tickers = reader.companies.slice(0, 3).map((c) => c.ticker);
    const start = "2025-03-03";
    const g = await get("export/prices", {
      format: "parquet",
      tickers: tickers.join(","),
      start_date: start,
      columns: "ticker,date,close",
    });
    expect(g.status).toBe(200);
    expect(g.headers.get("content-type")).toBe("application/vnd.apache.parquet");
    expect(Number(g.headers.get("content-length"))).toBe(g.bytes.length);
    const file = join(mkdtempSync(join(tmpdir(), "export-test-")), "p.parquet");
    writeFileSync(file, g.bytes);
    const got = await rows(
      db.conn,
      "select ticker, strftime(date, '%Y-%m-%d') as d, close from read_parquet($f) order by ticker, d",
      { f: file },
    );
    const want = await rows(
      db.conn,
      "select ticker, strftime(date, '%Y-%m-%d') as d, close from read_parquet($f) " +
        "where ticker in ($a, $b, $c) and date >= $s::date order by ticker, d",
      { f: join(dir, "prices.parquet"), a: tickers[0], b: tickers[1], c: tickers[2], s: start },
    );
    expect(want.length).toBeGreaterThan(100);
    expect(got).toEqual(want);
    const [desc] = await rows<{ names: string[] }>(
      db.conn,
      "select list(column_name) as names from (describe select * from read_parquet($f))",
      { f: file },
    );
    expect(desc.names).toEqual(["ticker", "date", "close"]);
  });
});

describe("export: checks", () => {
  it("scopes per table: ratings-only reads ratings, not returns (403); portfolio returns need analytics", async () => {
    expect((await get("export/ratings", {}, KEYS.aliceRatingsOnly)).status).toBe(200);
    const denied = await get("export/stock_returns", {}, KEYS.aliceRatingsOnly);
    expect(denied.status).toBe(403);
    expect(json(denied).error.code).toBe("forbidden");
    expect((await get("export/financial_income", {}, KEYS.aliceRatingsOnly)).status).toBe(403);
    expect((await get("export/portfolio_returns", {}, KEYS.aliceNoAnalytics)).status).toBe(403);
    expect((await get("export/portfolio_holdings", {}, KEYS.aliceNoAnalytics)).status).toBe(200);
    expect((await get("export/ratings", {}, "srk_unknown_key_0123456789abcdef0000")).status).toBe(401);
  });

  it("bad parameters: a 400 naming each, an unknown table too", async () => {
    const cases: [string, Record<string, string>, string][] = [
      ["ratings", { format: "csv" }, "format"],
      ["ratings", { tickers: "A B" }, "tickers"],
      ["ratings", { start_date: "2025-02-30" }, "start_date"],
      ["ratings", { start_date: "2025-03-01", end_date: "2025-01-01" }, "end_date"],
      ["ratings", { columns: "ticker,nope" }, "columns"],
      ["ratings", { columns: 'x"; drop table t; --' }, "columns"],
      ["portfolio_returns", { tickers: "AAPL" }, "tickers"],
      ["stock_metrics", { end_date: "2025-01-01" }, "end_date"],
      ["ratings", { tickers: "A\u0000" }, "tickers"],
    ];
    for (const [table, params, param] of cases) {
      const g = await get(`export/${table}`, params);
      expect([table, params, g.status]).toEqual([table, params, 400]);
      expect(json(g).error.details.map((d: { param: string }) => d.param)).toEqual([param]);
    }
    // the table is an enum path parameter: an unknown one is named like any bad value
    const nf = await get("export/companies_secret");
    expect(nf.status).toBe(400);
    expect(json(nf).error.details.map((d: { param: string }) => d.param)).toEqual(["table"]);
  });

  it("an unknown ticker is a 404 naming it, not an empty stream; an unknown parameter a 400 naming it", async () => {
    const known = reader.companies[0].ticker;
    const one = await get("export/stock_metrics", { tickers: "NOPEX" });
    expect([one.status, json(one).error.code, json(one).error.message]).toEqual([
      404,
      "not_found",
      "unknown ticker NOPEX",
    ]);
    const mixed = await get("export/ratings", { tickers: `${known},NOPEX,ZZZZQ`, format: "parquet" });
    expect([mixed.status, json(mixed).error.message]).toEqual([404, "unknown tickers NOPEX, ZZZZQ"]);
    const typo = await get("export/ratings", { ticker: known });
    expect(typo.status).toBe(400);
    expect(json(typo).error.details.map((d: { param: string }) => d.param)).toEqual(["ticker"]);
  });

  it("ETag per snapshot and request: If-None-Match answers 304 without a body", async () => {
    const a = await get("export/stock_returns", { tickers: reader.companies[1].ticker });
    const etag = a.headers.get("etag")!;
    expect(etag).toMatch(/^W\/"/);
    const b = await get("export/stock_returns", { tickers: reader.companies[1].ticker }, KEYS.alice, {
      "If-None-Match": etag,
    });
    expect([b.status, b.bytes.length, b.headers.get("etag")]).toEqual([304, 0, etag]);
    const other = await get("export/stock_returns", { tickers: reader.companies[2].ticker });
    expect(other.headers.get("etag")).not.toBe(etag);
    const pq = await get("export/stock_returns", { tickers: reader.companies[1].ticker, format: "parquet" });
    expect(pq.headers.get("etag")).not.toBe(etag);
    // HEAD: the headers of the GET, no body, nothing read
    const u = `${srv.url}/data/v1/export/stock_returns?tickers=${reader.companies[1].ticker}&api_key=${KEYS.alice}`;
    const head = await fetch(u, { method: "HEAD" });
    expect([head.status, head.headers.get("etag"), head.headers.get("content-type")]).toEqual([
      200,
      etag,
      "application/vnd.apache.arrow.stream",
    ]);
    expect((await head.arrayBuffer()).byteLength).toBe(0);
  });

  it("a client that stops reading mid-stream: the server goes on serving", async () => {
    const ac = new AbortController();
    const r = await fetch(`${srv.url}/data/v1/export/prices?api_key=${KEYS.alice}`, { signal: ac.signal });
    const body = r.body!.getReader();
    await body.read(); // the schema message at least
    ac.abort();
    await body.cancel().catch(() => undefined);
    const after = await get("export/portfolio_returns");
    expect(after.status).toBe(200);
    expect(tableFromIPC(after.bytes).numRows).toBeGreaterThan(0);
  });

  it("an in-memory snapshot has no files to export: 503", async () => {
    const mem = await startTestServer();
    try {
      const r = await mem.api("export/ratings");
      expect(r.status).toBe(503);
    } finally {
      await mem.close();
    }
  });
});

describe("export: a cap on exports streaming at once (EXPORT_MAX_CONCURRENT)", () => {
  /**
   * A raw client that asks for a ~40 MB stream (500 copies of a column) and stops reading after its
   * first bytes: its export then blocks on backpressure, holding its slot. Answers once the status
   * line is in (the export has its slot) with that line.
   */
  async function stalledExport(): Promise<{ socket: net.Socket; status: string }> {
    const u = new URL(srv.url);
    const cols = Array.from({ length: 500 }, () => "columns=ret").join("&");
    const socket = net.connect(Number(u.port), u.hostname);
    socket.on("error", () => undefined);
    socket.write(`GET /data/v1/export/stock_returns?${cols}&api_key=${KEYS.alice} HTTP/1.1\r\nHost: x\r\n\r\n`);
    const first = await new Promise<Buffer>((r) => socket.once("data", r));
    socket.pause();
    return { socket, status: first.subarray(0, first.indexOf("\r\n")).toString() };
  }
  /** `read` again every 50 ms (bounded) until its status is `want`: the last answer. */
  async function until(want: number, read: () => Promise<Got>) {
    let g = await read();
    for (let i = 0; i < 200 && g.status !== want; i++) {
      await new Promise((r) => setTimeout(r, 50));
      g = await read();
    }
    return g;
  }

  it("beyond the limit a 503 naming it, with Retry-After; HEAD and other reads still served; freed after", async () => {
    configureExports({ maxConcurrent: 1 });
    const { socket: stalled, status } = await stalledExport();
    try {
      expect(status).toBe("HTTP/1.1 200 OK");
      // filtered: a whole-table export may be a cached file, which takes no slot (export-cache.test.ts)
      const t = reader.companies[1].ticker;
      const busy = await get("export/ratings", { tickers: t });
      expect(busy.status).toBe(503);
      expect(busy.headers.get("retry-after")).toBe("5");
      expect(json(busy).error.code).toBe("unavailable");
      expect(json(busy).error.message).toContain("EXPORT_MAX_CONCURRENT=1");
      expect((await get("export/ratings", { tickers: t, format: "parquet" })).status).toBe(503);
      // a HEAD reads no rows, a REST read is no export: both answered meanwhile
      const head = await fetch(`${srv.url}/data/v1/export/ratings?api_key=${KEYS.alice}`, { method: "HEAD" });
      expect(head.status).toBe(200);
      expect((await get(`stock_ratings/${reader.companies[0].ticker}`)).status).toBe(200);
      stalled.destroy(); // the client goes away: its slot is freed
      const after = await until(200, () => get("export/ratings"));
      expect(after.status).toBe(200);
      expect(tableFromIPC(after.bytes).numRows).toBeGreaterThan(0);
    } finally {
      stalled.destroy();
      configureExports({ maxConcurrent: 4 });
    }
  });

  it("two slots: a second export streams beside a stalled one", async () => {
    configureExports({ maxConcurrent: 2 });
    const { socket: stalled, status } = await stalledExport();
    try {
      expect(status).toBe("HTTP/1.1 200 OK");
      const g = await get("export/portfolio_returns");
      expect(g.status).toBe(200);
    } finally {
      stalled.destroy();
      configureExports({ maxConcurrent: 4 });
    }
  });

  it("the limit is a whole number of at least 1: configuration refuses anything else", () => {
    expect(() => configureExports({ maxConcurrent: 0 })).toThrow(RangeError);
    expect(loadConfig({}).exportMaxConcurrent).toBe(4);
    expect(loadConfig({ EXPORT_MAX_CONCURRENT: "2" }).exportMaxConcurrent).toBe(2);
    expect(() => loadConfig({ EXPORT_MAX_CONCURRENT: "0" })).toThrow(/EXPORT_MAX_CONCURRENT/);
  });
});
