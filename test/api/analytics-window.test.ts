// The window (issue #41 item 1): `start`/`end` on stock_metrics, portfolio_metrics, stock_performance,
// portfolio_performance and their GraphQL fields, over a snapshot a real pipeline run published (a
// generated 20-company source), served by the lazy reader. Reference numbers: the stock's daily
// returns as DuckDB reads them from the snapshot's Parquet, compounded here by hand.
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReaderSource } from "../../api/resources/reader-source.ts";
import { metricRows } from "../../pipeline/analytics/index.ts";
import { rows } from "../../pipeline/store/duck/duck.ts";
import { SnapshotReader } from "../../pipeline/store/read/snapshot-reader.ts";
import { publishedSnapshot } from "../store/published.ts";
import { KEYS } from "./fixture.ts";
import { startTestServer, type TestServer } from "./helpers.ts";

let srv: TestServer;
let reader: SnapshotReader;
let db: Awaited<ReturnType<typeof publishedSnapshot>>["db"];
let ticker: string;
let dates: string[];
let rets: number[];
let returnsGlob: string;

type Row = Record<string, string>;
type Series = { name: string; data: { date: string; return: number }[] };

beforeAll(async () => {
  const snap = await publishedSnapshot({ companies: 20, years: 2, seed: 7 });
  db = snap.db;
  reader = await SnapshotReader.open(snap.dataDir, snap.id, { cacheEntries: 8 });
  srv = await startTestServer({ deps: { snapshot: () => new ReaderSource(reader) } });
  returnsGlob = join(snap.dir, "stock_returns", "*.parquet");
  const got = (await rows(
    db.conn,
    `select id, strftime(date, '%Y-%m-%d') as d, ret from read_parquet($1) where id = (select min(id) from ` +
      `read_parquet($1)) order by date`,
    [join(snap.dir, "stock_returns", "*.parquet")],
  )) as { id: string; d: string; ret: number }[];
  ticker = got[0].id;
  dates = got.map((r) => r.d);
  rets = got.map((r) => r.ret);
}, 180_000);
afterAll(async () => {
  await srv?.close();
  reader?.close();
  db?.close();
});

/** Π(1 + r) − 1 over the returns dated within [start, end], by hand. */
const compound = (start: string, end: string) =>
  rets.reduce((p, r, i) => (dates[i] >= start && dates[i] <= end ? p * (1 + r) : p), 1) - 1;
const pct2 = (x: number) => `${(x * 100).toFixed(2)}%`;
const value = (t: Row[], metric: string, col: string) => t.find((r) => r.metric === metric)?.[col];

describe("stock_metrics and stock_performance with start/end", () => {
  it("no parameters: the stored full-period table; a window covering every date too", async () => {
    const plain = await srv.api(`stock_metrics/${ticker}`);
    expect(plain.status).toBe(200);
    const all = await srv.api(`stock_metrics/${ticker}`, { start: "1990-01-01", end: "2100-12-31" });
    expect(all.text).toBe(plain.text);
    // the stored table is the one the same functions compute from the whole series
    const computed = metricRows({ dates, returns: Float64Array.from(rets) }, ticker);
    expect(plain.json).toEqual(computed);
  });

  it("the table over the window: Start Period its first priced date, cumulative from the close before", async () => {
    const start = "2024-06-15"; // a Saturday or not: the window starts at the first priced date on or after it
    const end = dates[dates.length - 40];
    const first = dates.find((d) => d >= start)!;
    const t = (await srv.api(`stock_metrics/${ticker}`, { start, end })).json as Row[];
    expect(value(t, "Start Period", ticker)).toBe(first);
    expect(value(t, "End Period", ticker)).toBe(end);
    expect(value(t, "Cumulative Return ", ticker)).toBe(pct2(compound(start, end)));
    const open = (await srv.api(`stock_metrics/${ticker}`, { start })).json as Row[];
    expect(value(open, "End Period", ticker)).toBe(dates.at(-1));
    const upTo = (await srv.api(`stock_metrics/${ticker}`, { end })).json as Row[];
    expect(value(upTo, "Start Period", ticker)).toBe(dates[0]);
    expect(value(upTo, "Cumulative Return ", ticker)).toBe(pct2(compound(dates[0], end)));
  });

  it("series over the window: a point per return date in it, cumulative from its first", async () => {
    const start = dates[100];
    const end = dates[300];
    const s = (await srv.api(`stock_performance/${ticker}`, { start, end })).json as Series[];
    expect(s[0].data.map((p) => p.date)).toEqual(dates.slice(100, 301));
    expect(s[0].data.at(-1)!.return).toBeCloseTo(compound(start, end), 10);
    expect(s[0].data[0].return).toBeCloseTo(rets[100], 12);
    const withBench = (await srv.api(`stock_performance/${ticker}`, { start, end, benchmark: "1" })).json as Series[];
    expect(withBench).toHaveLength(2);
    expect(withBench[1].data.map((p) => p.date)).toEqual(dates.slice(100, 301));
    const whole = await srv.api(`stock_performance/${ticker}`, { type: "drawdown" });
    expect((await srv.api(`stock_performance/${ticker}`, { type: "drawdown", start: dates[0] })).text).toBe(whole.text);
  });

  it("a window with no returns is an empty table and empty series", async () => {
    expect((await srv.api(`stock_metrics/${ticker}`, { start: "2099-01-01" })).json).toEqual([]);
    const s = (await srv.api(`stock_performance/${ticker}`, { end: "1999-01-01" })).json as Series[];
    expect(s).toEqual([{ name: ticker, data: [] }]);
  });

  it("bad bounds are a 400 naming the parameter", async () => {
    for (const [q, param] of [
      [{ start: "2024-02-30" }, "start"],
      [{ end: "yesterday" }, "end"],
      [{ start: "2024-05-01", end: "2024-04-01" }, "end"],
      [{ start: "2024-05-01", period: "1" }, "period"],
    ] as [Record<string, string>, string][])
      for (const path of [`stock_metrics/${ticker}`, `stock_performance/${ticker}`, "portfolio_metrics/101"]) {
        if (path.includes("performance") && "period" in q) continue; // performance takes no period
        const r = await srv.api(path, q);
        expect(r.status, `${path} ${JSON.stringify(q)}`).toBe(400);
        expect(JSON.stringify(r.json)).toContain(`"param":"${param}"`);
      }
  });
});

describe("portfolio_metrics and portfolio_performance with start/end", () => {
  it("windows a portfolio as a stock", async () => {
    const s = (await srv.api("portfolio_performance/101")).json as Series[];
    const pd = s[0].data.map((p) => p.date);
    const start = pd[50];
    const end = pd[250];
    const t = (await srv.api("portfolio_metrics/101", { start, end, benchmark: "1" })).json as Row[];
    expect(value(t, "Start Period", "Portfolio")).toBe(start);
    expect(value(t, "End Period", "Portfolio")).toBe(end);
    const w = (await srv.api("portfolio_performance/101", { start, end })).json as Series[];
    expect(w[0].data.map((p) => p.date)).toEqual(pd.slice(50, 251));
    // cumulative over the window = the full series' growth from the close before `start` to `end`
    const growth = (1 + s[0].data[250].return) / (1 + s[0].data[49].return) - 1;
    expect(w[0].data.at(-1)!.return).toBeCloseTo(growth, 10);
    expect(value(t, "Cumulative Return ", "Portfolio")).toBe(pct2(growth));
  });
});

describe("GraphQL metrics and performance with start/end", () => {
  it("answer what REST answers, and name a bad bound", async () => {
    const start = dates[100];
    const end = dates[300];
    const q = `query($t: String!, $s: String, $e: String) { stock(ticker: $t) {
      metrics(start: $s, end: $e) { metric values { column display } }
      performance(type: CUMULATIVE_RETURN, start: $s, end: $e) { name data { date return } } } }`;
    const call = async (variables: object) =>
      (await (
        await fetch(`${srv.url}/graphiql`, {
          method: "POST",
          headers: { api_key: KEYS.alice, "content-type": "application/json" },
          body: JSON.stringify({ query: q, variables }),
        })
      ).json()) as {
        data: { stock: { metrics: { metric: string; values: { display: string }[] }[]; performance: Series[] } };
        errors?: { message: string; extensions?: unknown }[];
      };
    const g = await call({ t: ticker, s: start, e: end });
    expect(g.errors).toBeUndefined();
    const rest = (await srv.api(`stock_metrics/${ticker}`, { start, end })).json as Row[];
    expect(g.data.stock.metrics.map((m) => [m.metric, m.values[0].display])).toEqual(
      rest.map((r) => [r.metric, r[ticker]]),
    );
    const restSeries = (await srv.api(`stock_performance/${ticker}`, { start, end })).json as Series[];
    expect(g.data.stock.performance[0].data).toEqual(restSeries[0].data);
    const bad = await call({ t: ticker, s: end, e: start });
    expect(JSON.stringify(bad.errors)).toContain("end");
  });
});

describe("compare: other subjects side by side over the common period", () => {
  const tickersOf = async () =>
    (
      (await rows(db.conn, "select distinct id from read_parquet($1) order by id limit 5", [returnsGlob])) as {
        id: string;
      }[]
    ).map((r) => r.id);

  it("stock_metrics adds a column per compared stock: its own read over the same dates", async () => {
    const others = (await tickersOf()).filter((t) => t !== ticker).slice(0, 2);
    const start = dates[200];
    const t = (await srv.api(`stock_metrics/${ticker}`, { start, compare: others.join(","), benchmark: "1" }))
      .json as Row[];
    expect(Object.keys(t[0]).slice(0, 2)).toEqual(["metric", ticker]);
    const own = (await srv.api(`stock_metrics/${ticker}`, { start, benchmark: "1" })).json as Row[];
    expect(t.map((r) => r[ticker])).toEqual(own.map((r) => r[ticker]));
    for (const o of others) {
      // every stock of the generated source trades on the same dates: the common period is the window
      const alone = (await srv.api(`stock_metrics/${o}`, { start, benchmark: "1" })).json as Row[];
      expect(t.map((r) => [r.metric, r[o]])).toEqual(alone.map((r) => [r.metric, r[o]]));
    }
  });

  it("stock_performance adds each compared stock's series", async () => {
    const [o] = (await tickersOf()).filter((t) => t !== ticker);
    const start = dates[100];
    const end = dates[300];
    const s = (await srv.api(`stock_performance/${ticker}`, { start, end, compare: o, benchmark: "1" }))
      .json as Series[];
    expect(s.map((x) => x.name)).toEqual([ticker, expect.any(String), o]);
    const alone = (await srv.api(`stock_performance/${o}`, { start, end })).json as Series[];
    expect(s[2].data).toEqual(alone[0].data);
  });

  it("portfolio endpoints compare portfolios, named Portfolio <id>", async () => {
    const t = (await srv.api("portfolio_metrics/101", { compare: "102" })).json as Row[];
    const p102 = (await srv.api("portfolio_metrics/102")).json as Row[];
    const p101 = (await srv.api("portfolio_performance/101")).json as Series[];
    const s102 = (await srv.api("portfolio_performance/102")).json as Series[];
    // the common period: the later first date of the two
    const first = [p101[0].data[0].date, s102[0].data[0].date].sort()[1];
    const alone = (await srv.api("portfolio_metrics/102", { start: first })).json as Row[];
    expect(t.map((r) => r["Portfolio 102"])).toEqual(alone.map((r) => r.Portfolio));
    expect(p102.length).toBe(t.length);
    const s = (await srv.api("portfolio_performance/101", { compare: "102" })).json as Series[];
    expect(s.map((x) => x.name)).toEqual(["Portfolio", "Portfolio 102"]);
    expect(s[0].data[0].date).toBe(first);
  });

  it("an unknown or an eleventh id is a 400 naming compare", async () => {
    for (const [path, compare] of [
      [`stock_metrics/${ticker}`, "NOPE"],
      [`stock_performance/${ticker}`, "A,B,C,D,E,F,G,H,I,J,K"],
      ["portfolio_metrics/101", "999999"],
      ["portfolio_performance/101", ","],
    ]) {
      const r = await srv.api(path, { compare });
      expect(r.status, `${path} ${compare}`).toBe(400);
      expect(JSON.stringify(r.json)).toContain('"param":"compare"');
    }
  });
});

describe("GraphQL compare", () => {
  const post = async (query: string, variables: object) =>
    (await (
      await fetch(`${srv.url}/graphiql`, {
        method: "POST",
        headers: { api_key: KEYS.alice, "content-type": "application/json" },
        body: JSON.stringify({ query, variables }),
      })
    ).json()) as { data?: Record<string, Record<string, unknown>>; errors?: unknown[] };

  it("answers REST's columns and series, and names a bad id", async () => {
    const [{ id: other }] = (await rows(db.conn, "select max(id) as id from read_parquet($1)", [returnsGlob])) as {
      id: string;
    }[];
    const start = dates[150];
    const q = `query($t: String!, $c: [String!], $s: String) { stock(ticker: $t) {
      metrics(compare: $c, start: $s) { metric values { column display } }
      performance(compare: $c, start: $s) { name data { date return } } } }`;
    const g = await post(q, { t: ticker, c: [other], s: start });
    expect(g.errors).toBeUndefined();
    const stock = g.data!.stock as {
      metrics: { metric: string; values: { column: string; display: string }[] }[];
      performance: Series[];
    };
    const rest = (await srv.api(`stock_metrics/${ticker}`, { compare: other, start })).json as Row[];
    expect(
      stock.metrics.map((m) =>
        Object.fromEntries([["metric", m.metric], ...m.values.map((v) => [v.column, v.display])]),
      ),
    ).toEqual(rest);
    const restSeries = (await srv.api(`stock_performance/${ticker}`, { compare: other, start })).json as Series[];
    expect(stock.performance).toEqual(restSeries.map((s) => ({ name: s.name, data: s.data })));
    const bad = await post(q, { t: ticker, c: ["NOPE"], s: start });
    expect(JSON.stringify(bad.errors)).toContain("compare");
    const p = await post(`{ portfolio(id: "101") { performance(compare: ["102"]) { name } } }`, {});
    expect(p.data!.portfolio).toEqual({ performance: [{ name: "Portfolio" }, { name: "Portfolio 102" }] });
  });
});
