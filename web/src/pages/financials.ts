// A stock's statements (income, balance, cash flow, derived) of one type, each as a table with a
// row per item and a column per period, newest first.

import { downloads } from "../analytics.ts";
import { rest } from "../api.ts";
import { errorBox, h, table } from "../dom.ts";
import { usd } from "../format.ts";

type Row = Record<string, string | number | null>;
const TYPES = ["annual", "quarterly", "ttm"] as const;
const PERIOD_KEYS = new Set(["Fiscal Year", "Fiscal Period", "Report Date"]);

function statement(name: string, rows: Row[]): HTMLElement {
  const cols = [...rows].reverse();
  const items = rows.length ? Object.keys(rows[0]).filter((k) => !PERIOD_KEYS.has(k)) : [];
  const cell = (v: string | number | null) => (v === null ? "–" : typeof v === "number" ? usd(v) : v);
  const title = name
    .replace(/^stock/, "")
    .replace(/Data$/, "")
    .replace(/([a-z])([A-Z])/g, "$1 $2");
  return h(
    "section",
    { class: "statement" },
    h("h4", null, title),
    rows.length === 0
      ? h("p", { class: "empty" }, "no statements")
      : h(
          "div",
          { class: "scroll" },
          table(
            null,
            ["Item", ...cols.map((r) => `${r["Fiscal Period"]} ${r["Fiscal Year"]} (${r["Report Date"]})`)],
            items.map((it) => [it, ...cols.map((r) => cell(r[it]))]),
            "data financials",
          ),
        ),
  );
}

async function load(box: HTMLElement, ticker: string, type: string) {
  box.replaceChildren(h("p", { class: "loading" }, "Loading statements…"));
  try {
    const f = await rest<Record<string, unknown>>(`stock_financials/${encodeURIComponent(ticker)}`, { type });
    const arrays = Object.entries(f).filter(([, v]) => Array.isArray(v)) as [string, Row[]][];
    box.replaceChildren(
      downloads("Statements", `stock_financials/${encodeURIComponent(ticker)}`, { type }, `${ticker}-${type}`),
      ...arrays.map(([k, v]) => statement(k, v)),
    );
  } catch (e) {
    box.replaceChildren(errorBox(e));
  }
}

export function financialsSection(ticker: string): HTMLElement {
  const box = h("div", null);
  const pick = h(
    "select",
    { id: "fin-type", onchange: (e: Event) => void load(box, ticker, (e.target as HTMLSelectElement).value) },
    TYPES.map((t) => h("option", { value: t }, t === "ttm" ? "TTM" : t)),
  );
  void load(box, ticker, "annual");
  return h(
    "section",
    { class: "financials", "aria-labelledby": "fin-title" },
    h("h2", { id: "fin-title" }, "Financial statements"),
    h("label", { class: "field" }, "Period type ", pick),
    box,
  );
}
