// format=arrow on the REST endpoints: apache-arrow reads the stream, and every cell equals the
// JSON answer of the same request on the same snapshot (the tests' fixture), typed: dates as
// Arrow dates, numbers float64 / int32, the JSON's number texts (ratings "7.1234", market caps,
// metric figures "12.5%") as float64.
import type { Table } from "apache-arrow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEYS } from "./fixture.ts";
import { jsonAndArrow, startTestServer, type TestServer } from "./helpers.ts";

// biome-ignore lint/suspicious/noExplicitAny: JSON bodies, read by path and asserted on
type J = any;

let srv: TestServer;
beforeAll(async () => {
  srv = await startTestServer();
});
afterAll(() => srv?.close());

async function both(path: string, params: Record<string, string> = {}) {
  const r = await jsonAndArrow(srv.url, path, params);
  expect(r.res.headers.get("content-type")).toBe("application/vnd.apache.arrow.stream");
  return r;
}
const typeOf = (t: Table, name: string) => String(t.schema.fields.find((f) => f.name === name)?.type);
const col = (t: Table, name: string) => [...t.getChild(name)!] as unknown[];
const day = (ms: unknown) => (ms === null ? null : new Date(ms as number).toISOString().slice(0, 10));
const num = (text: string | null) => (text === null ? null : Number(text));

describe("format=arrow", () => {
  it("stock_ratings list: the JSON items, dotted columns, ratings and market cap as float64", async () => {
    const { json, table } = await both("stock_ratings", { limit: "30" });
    expect(table.numRows).toBe(30);
    expect(["date", "stock.ticker", "stock.id", "totalRating", "stock.marketCap"].map((c) => typeOf(table, c))).toEqual(
      ["Date32<DAY>", "Utf8", "Utf8", "Float64", "Float64"],
    );
    expect(col(table, "date").map(day)).toEqual(json.map((i: J) => i.date));
    expect(col(table, "stock.ticker")).toEqual(json.map((i: J) => i.stock.ticker));
    expect(col(table, "stock.id")).toEqual(json.map((i: J) => i.stock.id));
    expect(col(table, "totalRating")).toEqual(json.map((i: J) => num(i.totalRating)));
    expect(col(table, "macroRating")).toEqual(json.map((i: J) => num(i.macroRating)));
    expect(col(table, "stock.marketCap")).toEqual(json.map((i: J) => num(i.stock.marketCap)));
  });

  it("stock_metrics: each figure as a number (percent as a fraction) beside its published text", async () => {
    const t = srv.fx.snapshot.companies[0].ticker;
    const { json, table } = await both(`stock_metrics/${t}`);
    expect(col(table, "metric")).toEqual(json.map((r: J) => r.metric));
    expect(col(table, `${t}.display`)).toEqual(json.map((r: J) => r[t]));
    expect(typeOf(table, t)).toBe("Float64");
    const byMetric = new Map(json.map((r: J, i: number) => [r.metric.trim(), [r[t], col(table, t)[i]]]));
    // hand readings of the texts: "12.34%" is 0.1234, a plain number is itself, a date is no number
    const [startText, start] = byMetric.get("Start Period") as [string, number | null];
    expect(startText).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(start).toBeNull();
    const [cumText, cum] = byMetric.get("Cumulative Return") as [string, number];
    expect(cumText).toMatch(/%$/);
    expect(cum).toBeCloseTo(Number(cumText.slice(0, -1).replaceAll(",", "")) / 100, 12);
    const [sharpeText, sharpe] = byMetric.get("Sharpe") as [string, number];
    expect(sharpe).toBe(Number(sharpeText));
  });

  it("stock_performance: the CSV's long rows, date32 and float64", async () => {
    const t = srv.fx.snapshot.companies[2].ticker;
    const { json, table } = await both(`stock_performance/${t}`, { type: "cumulative_return" });
    expect([typeOf(table, "date"), typeOf(table, "return")]).toEqual(["Date32<DAY>", "Float64"]);
    expect(col(table, "date").map(day)).toEqual(json[0].data.map((d: J) => d.date));
    expect(col(table, "return")).toEqual(json[0].data.map((d: J) => d.return));
    expect(new Set(col(table, "name"))).toEqual(new Set([t]));
  });

  it("stock_financials: long rows with Fiscal Year int32, Report Date date32, value float64", async () => {
    const t = srv.fx.snapshot.companies[0].ticker;
    const { json, table } = await both(`stock_financials/${t}`, { type: "annual" });
    expect(["Fiscal Year", "Report Date", "value"].map((c) => typeOf(table, c))).toEqual([
      "Int32",
      "Date32<DAY>",
      "Float64",
    ]);
    const income = json.stockIncomeAnnualData[0] as Record<string, unknown>;
    const rows = table.toArray().map((r) => r.toJSON());
    const revenue = rows.find(
      (r) => r.statement === "income" && r.item === "Revenue" && r["Fiscal Year"] === income["Fiscal Year"],
    );
    expect(revenue?.value).toBe(income.Revenue);
    expect(day(revenue?.["Report Date"])).toBe(income["Report Date"]);
  });

  it("portfolio_trades: ids int32, prices and quantities float64; portfolios: timestamps and booleans", async () => {
    const { json, table } = await both("portfolio_trades/101", { value: "100000" });
    expect(json.length).toBeGreaterThan(0);
    expect(["id", "price", "quantity", "date"].map((c) => typeOf(table, c))).toEqual([
      "Int32",
      "Float64",
      "Float64",
      "Date32<DAY>",
    ]);
    expect(col(table, "id")).toEqual(json.map((r: J) => r.id));
    expect(col(table, "quantity")).toEqual(json.map((r: J) => r.quantity));
    const p = await both("portfolios", { private: "false" });
    expect([typeOf(p.table, "createdAt"), typeOf(p.table, "private")]).toEqual(["Timestamp<MILLISECOND, UTC>", "Bool"]);
    expect(col(p.table, "createdAt")).toEqual(p.json.map((x: J) => Date.parse(x.createdAt)));
  });

  it("ETag of its own (the body differs from the JSON's) and a 304 on If-None-Match", async () => {
    const u = `${srv.url}/data/v1/stock_ratings?limit=5&api_key=${KEYS.alice}`;
    const j = await fetch(u);
    const a = await fetch(`${u}&format=arrow`);
    const etag = a.headers.get("etag")!;
    expect(etag).not.toBe(j.headers.get("etag"));
    const again = await fetch(`${u}&format=arrow`, { headers: { "If-None-Match": etag } });
    expect(again.status).toBe(304);
    const bad = await fetch(`${u}&format=feather`);
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.details[0].param).toBe("format");
  });
});
