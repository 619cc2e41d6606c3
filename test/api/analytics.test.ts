import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  alignBenchmark,
  metricRows,
  performanceSeries,
  SERIES_TYPES,
  sliceByPeriod,
} from "../../pipeline/analytics/index.ts";
import { financialsLongRows, financialsResponse } from "../../pipeline/financials/index.ts";
import { metricsKey } from "../../pipeline/store/snapshot/model.ts";
import { parseCsv, startTestServer, type TestServer } from "./helpers.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(() => s?.close());

const T = () => s.fx.snapshot.companies[0].ticker;
const bench = () => s.fx.snapshot.benchmarks[0];
const withBench = (t: string) => ({
  name: bench().name,
  returns: alignBenchmark(s.fx.snapshot.stockReturns.get(t)!.dates, bench().levels),
});

describe("stock_financials", () => {
  it.each(["annual", "quarterly", "ttm"] as const)("type=%s equals financialsResponse", async (type) => {
    const t = T();
    const c = s.fx.snapshot.companyByTicker.get(t)!;
    const r = await s.api(`stock_financials/${t.toLowerCase()}`, type === "annual" ? {} : { type });
    expect(r.status).toBe(200);
    expect(r.json).toEqual(
      JSON.parse(
        JSON.stringify(
          financialsResponse({ id: c.id, ticker: c.ticker, name: c.name }, s.fx.snapshot.financials.get(t), type),
        ),
      ),
    );
    const cap = type === "ttm" ? "Ttm" : type === "annual" ? "Annual" : "Quarterly";
    for (const k of ["Income", "Balance", "CashFlow", "Derived"])
      expect(Array.isArray(r.json[`stock${k}${cap}Data`])).toBe(true);
  });

  it("a known stock without statements: 200 with empty arrays", async () => {
    const t = s.fx.snapshot.companies[100].ticker;
    const r = await s.api(`stock_financials/${t}`);
    expect(r.status).toBe(200);
    expect(r.json.stockIncomeAnnualData).toEqual([]);
  });

  it("CSV long rows statement,Fiscal Year,Fiscal Period,Report Date,item,value", async () => {
    const t = T();
    const c = s.fx.snapshot.companyByTicker.get(t)!;
    const r = await s.api(`stock_financials/${t}`, { format: "csv", type: "quarterly" });
    expect(r.status).toBe(200);
    expect(r.headers.get("content-disposition")).toBe('attachment; filename="stock_financials.csv"');
    const rows = parseCsv(r.text);
    expect(rows[0].slice(0, 6)).toEqual(["statement", "Fiscal Year", "Fiscal Period", "Report Date", "item", "value"]);
    const resp = financialsResponse(
      { id: c.id, ticker: c.ticker, name: c.name },
      s.fx.snapshot.financials.get(t),
      "quarterly",
    );
    expect(rows.length - 1).toBe(financialsLongRows(resp, "quarterly").length);
  });

  it("errors: unknown ticker 404, bad type 400", async () => {
    expect((await s.api("stock_financials/NOPE")).status).toBe(404);
    const r = await s.api(`stock_financials/${T()}`, { type: "monthly" });
    expect(r.status).toBe(400);
    expect(r.json.error.details[0].param).toBe("type");
  });
});

describe("stock_metrics", () => {
  it("full period: the stored rows", async () => {
    const t = T();
    const r = await s.api(`stock_metrics/${t.toLowerCase()}`);
    expect(r.status).toBe(200);
    expect(r.json).toEqual(s.fx.snapshot.metrics.get(metricsKey("stock", t)));
    expect(r.json[0].metric).toBe("Start Period");
    expect(Object.keys(r.json[0])).toEqual(["metric", t]);
  });

  it("reads the stored rows rather than recomputing", async () => {
    const t = s.fx.snapshot.companies[1].ticker;
    const key = metricsKey("stock", t);
    const saved = s.fx.snapshot.metrics.get(key)!;
    s.fx.snapshot.metrics.set(key, [{ metric: "Start Period", [t]: "sentinel" }]);
    try {
      const r = await s.api(`stock_metrics/${t}`);
      expect(r.json).toEqual([{ metric: "Start Period", [t]: "sentinel" }]);
    } finally {
      s.fx.snapshot.metrics.set(key, saved);
    }
  });

  it("with benchmark: stored rows with the benchmark column", async () => {
    const t = T();
    const r = await s.api(`stock_metrics/${t}`, { benchmark: bench().id });
    expect(r.status).toBe(200);
    expect(r.json).toEqual(s.fx.snapshot.metrics.get(metricsKey("stock", t, bench().id)));
    expect(Object.keys(r.json[0])).toEqual(["metric", t, bench().name]);
  });

  it("period: computed from the stored returns sliced (subject and aligned benchmark)", async () => {
    const t = s.fx.snapshot.companies[2].ticker;
    const returns = s.fx.snapshot.stockReturns.get(t)!;
    const r = await s.api(`stock_metrics/${t}`, { period: "0.5" });
    expect(r.json).toEqual(metricRows(sliceByPeriod(returns, 0.5), t));
    const b = await s.api(`stock_metrics/${t}`, { period: 0.5, benchmark: bench().id });
    const wb = withBench(t);
    expect(b.json).toEqual(
      metricRows(sliceByPeriod(returns, 0.5), t, { name: wb.name, returns: sliceByPeriod(wb.returns, 0.5) }),
    );
    const long = await s.api(`stock_metrics/${t}`, { period: 50 });
    expect(long.json).toEqual(s.fx.snapshot.metrics.get(metricsKey("stock", t)));
  });

  it("CSV metric,<ticker>,<benchmark>", async () => {
    const t = T();
    const r = await s.api(`stock_metrics/${t}`, { format: "csv", benchmark: bench().id });
    const rows = parseCsv(r.text);
    expect(rows[0]).toEqual(["metric", t, bench().name]);
    expect(rows.length - 1).toBe(s.fx.snapshot.metrics.get(metricsKey("stock", t, bench().id))!.length);
    expect(rows[1][0]).toBe("Start Period");
  });

  it.each([
    ["benchmark", "999"],
    ["benchmark", "x y"],
    ["period", "0"],
    ["period", "-1"],
    ["period", "abc"],
    ["format", "pdf"],
  ])("400 for %s=%s", async (p, v) => {
    const r = await s.api(`stock_metrics/${T()}`, { [p]: v });
    expect(r.status).toBe(400);
    expect(r.json.error.details[0].param).toBe(p);
  });

  it("unknown ticker 404", async () => {
    expect((await s.api("stock_metrics/NOPE")).status).toBe(404);
  });
});

describe("stock_performance", () => {
  it.each(SERIES_TYPES.filter((t) => t !== "rolling_beta"))("type=%s equals performanceSeries", async (type) => {
    const t = T();
    const r = await s.api(`stock_performance/${t.toLowerCase()}`, type === "cumulative_return" ? {} : { type });
    expect(r.status).toBe(200);
    const want = performanceSeries(type, { name: t, returns: s.fx.snapshot.stockReturns.get(t)! });
    expect(r.json).toEqual(JSON.parse(JSON.stringify(want)));
    expect(r.json[0].name).toBe(t);
  });

  it.each(SERIES_TYPES)("type=%s with benchmark: benchmark series aligned on the subject's dates", async (type) => {
    const t = s.fx.snapshot.companies[7].ticker; // starts late: alignment matters
    const r = await s.api(`stock_performance/${t}`, { type, benchmark: bench().id });
    expect(r.status).toBe(200);
    const want = performanceSeries(type, { name: t, returns: s.fx.snapshot.stockReturns.get(t)! }, withBench(t));
    expect(r.json).toEqual(JSON.parse(JSON.stringify(want)));
  });

  it("cumulative with benchmark: second series named by the benchmark, same dates, starts at 0", async () => {
    const t = s.fx.snapshot.companies[7].ticker;
    const r = await s.api(`stock_performance/${t}`, { benchmark: bench().id });
    expect(r.json).toHaveLength(2);
    expect(r.json[1].name).toBe(bench().name);
    expect(r.json[1].data.map((x: { date: string }) => x.date)).toEqual(
      r.json[0].data.map((x: { date: string }) => x.date),
    );
    expect(r.json[1].data[0].return).toBe(0);
  });

  it("rolling_beta without benchmark 400, unknown type 400, unknown benchmark 400", async () => {
    const a = await s.api(`stock_performance/${T()}`, { type: "rolling_beta" });
    expect(a.status).toBe(400);
    expect(a.json.error.details).toEqual([{ param: "benchmark", message: "rolling_beta requires benchmark" }]);
    const b = await s.api(`stock_performance/${T()}`, { type: "nope" });
    expect(b.status).toBe(400);
    expect(b.json.error.details[0].param).toBe("type");
    const c = await s.api(`stock_performance/${T()}`, { benchmark: "77" });
    expect(c.status).toBe(400);
    expect(c.json.error.details[0].param).toBe("benchmark");
  });

  it("CSV long rows per type", async () => {
    const t = T();
    const cum = parseCsv((await s.api(`stock_performance/${t}`, { format: "csv", benchmark: bench().id })).text);
    expect(cum[0]).toEqual(["name", "date", "return"]);
    const n = s.fx.snapshot.stockReturns.get(t)!.dates.length;
    expect(cum.length - 1).toBe(2 * n);
    expect(cum[1]).toEqual([t, s.fx.snapshot.stockReturns.get(t)!.dates[0], "0"]);
    expect(cum.at(-1)![0]).toBe(bench().name);
    const roll = parseCsv((await s.api(`stock_performance/${t}`, { format: "csv", type: "rolling_volatility" })).text);
    expect(roll[0]).toEqual(["name", "date", "return", "window"]);
    expect(roll[1][3]).toBe("126");
    const heat = parseCsv((await s.api(`stock_performance/${t}`, { format: "csv", type: "monthly_heatmap" })).text);
    expect(heat[0]).toEqual(["name", "date", "return", "year", "month"]);
    const box = parseCsv((await s.api(`stock_performance/${t}`, { format: "csv", type: "boxplot" })).text);
    expect(box[0].slice(0, 3)).toEqual(["name", "period", "min"]);
    expect(box.slice(1).map((x) => x[1])).toEqual(["Daily", "Weekly", "Monthly", "Quarterly", "Yearly"]);
    const hist = parseCsv((await s.api(`stock_performance/${t}`, { format: "csv", type: "histogram" })).text);
    expect(hist[0]).toEqual(["name", "date", "return", "bin_start", "bin_end"]);
    const beta = parseCsv(
      (await s.api(`stock_performance/${t}`, { format: "csv", type: "rolling_beta", benchmark: bench().id })).text,
    );
    expect(new Set(beta.slice(1).map((x) => x[3]))).toEqual(new Set(["126", "252"]));
  });
});
