// Every format=arrow endpoint read back with apache-arrow and compared value for value with its JSON
// answer on the same snapshot (issue #40: a format never drops or retypes what JSON carries). The
// expected rows are built here from the JSON alone, by the contract's flattening (§3: dotted columns,
// arrays as JSON text; series and financials as long rows); each JSON value must come back as:
// a number as that number (int32 where the response schema says integer), a YYYY-MM-DD text as an
// Arrow date, an ISO timestamp as a UTC timestamp, a number text ("7.1234", "12.5%") as float64, a
// boolean as bool, other text as itself. No JSON value may come back null.
import type { Table } from "apache-arrow";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { REST_ROUTES } from "../../api/rest/index.ts";
import { evidenceRows } from "./evidence-fixture.ts";
import { fixtureWithMetrics, jsonAndArrow, startTestServer, type TestServer } from "./helpers.ts";

// biome-ignore lint/suspicious/noExplicitAny: JSON bodies and JSON Schemas, walked generically
type J = any;
type Row = Record<string, unknown>;

let srv: TestServer;
beforeAll(async () => {
  const fx = fixtureWithMetrics();
  // the fixture's backtests keep no rebalance history: two changes, so the rebalances answer has rows
  fx.snapshot.portfolios.get("101")!.rebalances = [
    { date: "2015-01-02", holdingsCount: 2, added: ["AAPL", "APLE"], removed: [], turnover: 1, cost: 0.001 },
    { date: "2015-04-01", holdingsCount: 2, added: ["AMAT"], removed: ["APLE"], turnover: 0.5, cost: 0.0005 },
  ];
  fx.snapshot.ratingEvidence = evidenceRows();
  srv = await startTestServer({ fx });
});
afterAll(() => srv?.close());

/** Dotted paths the response schema types as integer (ids of trades, counts, years). */
function integerPaths(schema: z.ZodType): Set<string> {
  const root = z.toJSONSchema(schema, { io: "output", unrepresentable: "any", reused: "inline" }) as J;
  const out = new Set<string>();
  const deref = (s: J): J => (s?.$ref ? deref(root.$defs?.[s.$ref.split("/").pop()]) : s);
  const walk = (raw: J, at: string) => {
    const s = deref(raw);
    if (!s || typeof s !== "object") return;
    for (const alt of [...(s.anyOf ?? []), ...(s.oneOf ?? [])]) walk(alt, at);
    const types = [s.type].flat();
    if (types.includes("integer")) out.add(at);
    if (types.includes("array") && s.items) walk(s.items, at);
    for (const [k, v] of Object.entries(s.properties ?? {})) walk(v, at ? `${at}.${k}` : k);
  };
  walk(root, "");
  return out;
}

/** The contract's flattening (§3), written here from its text: nested objects dotted, arrays as JSON text. */
function flat(o: Row, prefix = "", out: Row = {}): Row {
  for (const [k, v] of Object.entries(o)) {
    const c = prefix ? `${prefix}.${k}` : k;
    if (v !== null && typeof v === "object" && !Array.isArray(v)) flat(v as Row, c, out);
    else out[c] = Array.isArray(v) ? JSON.stringify(v) : v;
  }
  return out;
}

type Shape = "objects" | "series" | "metrics" | "financials" | "wide" | "evidence";

/** `layout=wide`: one row per period, a `<statement>.<item>` column per item (docs/api/rest.md). */
function wideRows(json: J): Row[] {
  const rows = new Map<string, Row>();
  for (const [name, list] of Object.entries(json)) {
    const statement = /^stock(Income|Balance|CashFlow|Derived)/.exec(name)?.[1].toLowerCase();
    if (!statement || !Array.isArray(list)) continue;
    for (const r of list as Row[]) {
      const key = `${r["Fiscal Year"]}|${r["Fiscal Period"]}`;
      const out = rows.get(key) ?? { "Fiscal Year": r["Fiscal Year"], "Fiscal Period": r["Fiscal Period"] };
      for (const [item, value] of Object.entries(r))
        if (!item.startsWith("Fiscal") && item !== "Report Date") out[`${statement}.${item}`] = value;
      out["Report Date"] = r["Report Date"];
      rows.set(key, out);
    }
  }
  return [...rows.values()];
}

/** The rows the JSON answer holds, by the response's shape (docs/api/rest.md, CSV layouts). */
function expectedRows(shape: Shape, json: J): Row[] {
  if (shape === "objects") return (Array.isArray(json) ? json : [json]).map((o: Row) => flat(o));
  if (shape === "wide") return wideRows(json);
  if (shape === "evidence")
    // one row per rating and evaluated date, the summary repeated, the quintiles numbered from 1
    // (api/rest/rating-evidence.ts's header); a rating without dates: one row, its point empty
    return json.flatMap(({ ic, quintileReturns, ...summary }: J) => {
      const q = Object.fromEntries(quintileReturns.map((v: number, i: number) => [`quintileReturns.${i + 1}`, v]));
      const points = ic.length ? ic : [{ date: null, ic: null, stocks: null }];
      return points.map((pt: Row) => ({ ...summary, ...q, ...pt }));
    });
  if (shape === "series")
    return json.flatMap((s: J) =>
      s.data.map((d: Row) => ({ name: s.name, ...d, ...(s.window === undefined ? {} : { window: s.window }) })),
    );
  if (shape === "metrics")
    // each figure as a number where its text is one, and the published text beside it (`.display`)
    return json.map((r: Record<string, string>) => {
      const out: Row = {};
      for (const [k, v] of Object.entries(r))
        if (k === "metric") out[k] = v;
        else Object.assign(out, { [k]: NUMBER_TEXT.test(v) ? v : null, [`${k}.display`]: v });
      return out;
    });
  const rows: Row[] = [];
  for (const list of Object.values(json))
    if (Array.isArray(list))
      for (const r of list as Row[])
        for (const [item, value] of Object.entries(r)) {
          if (["Fiscal Year", "Fiscal Period", "Report Date"].includes(item)) continue;
          const period = { "Fiscal Year": r["Fiscal Year"], "Fiscal Period": r["Fiscal Period"], item };
          const isDate = typeof value === "string" && DAY.test(value);
          rows.push({ ...period, value: isDate ? null : value, "value.date": isDate ? value : null });
        }
  return rows;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;
const STAMP = /^\d{4}-\d{2}-\d{2}T[\d:.]+(Z|[+-]\d{2}:\d{2})$/;
const NUMBER_TEXT = /^[-+]?[\d,]*\.?\d+(?:[eE][-+]?\d+)?%?$/;

/**
 * What a JSON value reads back as from Arrow, and the Arrow type it must have; `text`: a column
 * whose number texts stay text (ids such as "101", the metrics' `.display`).
 */
function expectedCell(v: unknown, integer: boolean, text: "display" | boolean): { value: unknown; type: RegExp } {
  if (text === "display") return { value: v, type: /^Utf8$/ };
  if (typeof v === "number") return { value: v, type: integer ? /^Int32$/ : /^(Float64|Int32)$/ };
  if (typeof v === "boolean") return { value: v, type: /^Bool$/ };
  const s = String(v);
  if (DAY.test(s)) return { value: Date.parse(s), type: /^Date32<DAY>$/ };
  if (STAMP.test(s)) return { value: Date.parse(s), type: /^Timestamp<MILLISECOND, UTC>$/ };
  if (NUMBER_TEXT.test(s) && !text) {
    const n = Number(s.replace(/[,%]/g, ""));
    return { value: s.endsWith("%") ? n / 100 : n, type: /^Float64$/ };
  }
  return { value: s, type: /^Utf8$/ };
}

const cellOf = (t: Table, name: string, i: number) => {
  const v = t.getChild(name)?.get(i);
  return v instanceof Date ? v.getTime() : typeof v === "bigint" ? Number(v) : v;
};

const both = (path: string, params: Record<string, string>) => jsonAndArrow(srv.url, path, params);

/** One request per REST route (format=arrow is a parameter of each), with the shape of its rows. */
function requests(): [route: string, path: string, params: Record<string, string>, shape: Shape][] {
  const t = srv.fx.snapshot.companies[0].ticker;
  return [
    ["stock_ratings_list", "stock_ratings", { limit: "40" }, "objects"],
    ["stock_ratings_one", `stock_ratings/${t}`, {}, "objects"],
    ["stock_financials", `stock_financials/${t}`, { type: "annual" }, "financials"],
    ["stock_financials", `stock_financials/${t}`, { type: "quarterly" }, "financials"],
    ["stock_financials", `stock_financials/${t}`, { type: "ttm" }, "financials"],
    ["stock_financials", `stock_financials/${t}`, { type: "annual", layout: "wide" }, "wide"],
    ["stock_financials", `stock_financials/${t}`, { type: "quarterly", layout: "wide" }, "wide"],
    ["stock_metrics", `stock_metrics/${t}`, {}, "metrics"],
    ["stock_performance", `stock_performance/${t}`, { type: "cumulative_return" }, "series"],
    ["stock_performance", `stock_performance/${t}`, { type: "rolling_sharpe" }, "series"],
    ["portfolios_list", "portfolios", {}, "objects"],
    ["portfolio_one", "portfolios/201", {}, "objects"],
    ["portfolio_holdings", "portfolio_holdings/101", {}, "objects"],
    ["portfolio_trades", "portfolio_trades/101", { value: "100000" }, "objects"],
    ["portfolio_metrics", "portfolio_metrics/101", {}, "metrics"],
    ["portfolio_performance", "portfolio_performance/101", { type: "monthly_heatmap" }, "series"],
    ["watchlists_list", "watchlists", {}, "objects"],
    ["watchlist_one", "watchlists/1", {}, "objects"],
    ["watchlist_items", "watchlist_items/1", {}, "objects"],
    ["benchmarks", "benchmarks", {}, "objects"],
    ["portfolio_rebalances", "portfolio_rebalances/101", {}, "objects"],
    ["rating_evidence", "rating_evidence", { horizon: "1" }, "evidence"],
    ["rating_evidence", "rating_evidence", { horizon: "12" }, "evidence"],
  ];
}

// Long layouts: the integer columns the contract names (the response schema types them as records)
const LONG_INTEGERS = new Set(["Fiscal Year", "year", "month", "window", "horizon", "dates", "stocks"]);
// in the wide layout an item column holds one item: a whole-number figure (EBITDA 700) is still a
// float64 column (another period's may not be whole); only the period's year is int32

describe("format=arrow reads back as its JSON, value for value", () => {
  it("covers every REST route that takes format", () => {
    const covered = new Set(requests().map(([id]) => id));
    const withFormat = REST_ROUTES.filter((r) => r.id !== "export").map((r) => r.id);
    expect([...withFormat].filter((id) => !covered.has(id))).toEqual([]);
  });

  it.each([...Array(23).keys()])("request %i", async (n) => {
    const [id, path, params, shape] = requests()[n];
    const route = REST_ROUTES.find((r) => r.id === id)!;
    const ints = shape === "objects" ? integerPaths(route.response) : LONG_INTEGERS;
    const { json, table } = await both(path, params);
    const rows = expectedRows(shape, json);
    expect(rows.length, path).toBeGreaterThan(0);
    expect(table.numRows, path).toBe(rows.length);
    rows.forEach((row, i) => {
      for (const [k, v] of Object.entries(row)) {
        const field = table.schema.fields.find((f) => f.name === k);
        expect(field, `${path}: column ${k}`).toBeDefined();
        if (v === null || v === undefined) {
          expect(cellOf(table, k, i), `${path} row ${i} ${k}`).toBeNull();
          continue;
        }
        const asText = k.endsWith(".display") ? "display" : String(field?.type) === "Utf8";
        const want = expectedCell(v, ints.has(k), asText);
        expect(String(field?.type), `${path}: type of ${k}`).toMatch(want.type);
        expect(cellOf(table, k, i), `${path} row ${i} ${k} (${JSON.stringify(v)})`).toEqual(want.value);
      }
    });
  });

  it("stock_financials keeps the date-valued items as dates (value.date), not null", async () => {
    const t = srv.fx.snapshot.companies[0].ticker;
    const { json, table } = await both(`stock_financials/${t}`, { type: "annual" });
    const derived = json.stockDerivedAnnualData[0];
    expect(derived["Publish Date"]).toMatch(DAY); // the fixture's 2014-02-15 for fiscal 2013
    const rows = table.toArray().map((r) => r.toJSON());
    const publish = rows.find((r) => r.item === "Publish Date" && r["Fiscal Year"] === derived["Fiscal Year"]);
    expect(new Date(publish?.["value.date"]).toISOString().slice(0, 10)).toBe(derived["Publish Date"]);
    expect(publish?.value).toBeNull();
  });
});
