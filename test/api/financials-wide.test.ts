// stock_financials?layout=wide (issue #40.6): one row per period, one `<statement>.<item>` column per
// item, so a CSV reader's type inference (pandas read_csv, polars read_csv) sees one kind per column:
// numbers only, or dates only. No pandas or polars on this machine: the test checks that property
// of the CSV itself, and every cell against the JSON; the Arrow body is compared value for value in
// arrow-roundtrip.test.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseCsv, startTestServer, type TestServer } from "./helpers.ts";

let srv: TestServer;
let ticker: string;
beforeAll(async () => {
  srv = await startTestServer();
  ticker = srv.fx.snapshot.companies[0].ticker;
});
afterAll(() => srv?.close());

const NUMBER = /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

describe("stock_financials layout=wide", () => {
  it("CSV: one row per period, a column per statement item, each cell the JSON's value", async () => {
    const json = (await srv.api(`stock_financials/${ticker}`, { type: "annual" })).json as Record<string, unknown>;
    const csv = await srv.api(`stock_financials/${ticker}`, { type: "annual", layout: "wide", format: "csv" });
    expect(csv.status).toBe(200);
    const [header, ...rows] = parseCsv(csv.text);
    expect(header.slice(0, 3)).toEqual(["Fiscal Year", "Fiscal Period", "Report Date"]);
    // the fixture's annual statements: fiscal 2013 and 2014 (test/api/fixture.ts), so two rows
    expect(rows.map((r) => r[0])).toEqual(["2013", "2014"]);
    const income = json.stockIncomeAnnualData as Record<string, unknown>[];
    const derived = json.stockDerivedAnnualData as Record<string, unknown>[];
    const cell = (row: number, column: string) => rows[row][header.indexOf(column)];
    expect(cell(0, "income.Revenue")).toBe(String(income[0].Revenue));
    expect(cell(1, "derived.Publish Date")).toBe(derived[1]["Publish Date"]); // 2015-02-15 in the fixture
    expect(cell(0, "derived.Gross Profit Margin")).toBe("0.6000");
    for (const [statement, list] of [
      ["income", income],
      ["derived", derived],
    ] as const)
      for (const [i, r] of list.entries())
        for (const [item, v] of Object.entries(r))
          if (!["Fiscal Year", "Fiscal Period", "Report Date"].includes(item))
            expect(cell(i, `${statement}.${item}`), `${statement}.${item}`).toBe(v === null ? "" : String(v));
  });

  it("each column after the period's holds one kind, numbers or dates (read_csv infers dtypes)", async () => {
    for (const type of ["annual", "quarterly", "ttm"]) {
      const csv = await srv.api(`stock_financials/${ticker}`, { type, layout: "wide", format: "csv" });
      const [header, ...rows] = parseCsv(csv.text);
      for (let c = 3; c < header.length; c++) {
        const cells = rows.map((r) => r[c]).filter((v) => v !== "");
        const kind = cells.every((v) => NUMBER.test(v)) ? "number" : cells.every((v) => DAY.test(v)) ? "date" : "mixed";
        expect(kind, `${type} ${header[c]}: ${cells.join(", ")}`).not.toBe("mixed");
      }
    }
  });

  it("the JSON is the same in either layout; a bad layout is a 400 naming it", async () => {
    const long = await srv.api(`stock_financials/${ticker}`);
    const wide = await srv.api(`stock_financials/${ticker}`, { layout: "wide" });
    expect(wide.text).toBe(long.text);
    const bad = await srv.api(`stock_financials/${ticker}`, { layout: "tall", format: "csv" });
    expect(bad.status).toBe(400);
    expect((bad.json as { error: { details: { param: string }[] } }).error.details[0].param).toBe("layout");
  });
});
