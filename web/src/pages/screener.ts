// The screener: stock_ratings of a date with search, rating ranges and an order, read page by page
// (200 at a time) from the REST list. Sector and industry are filtered here, since the interface
// has no such parameter; paging over the filtered list is therefore local too.
import { rest } from "../api.ts";
import { errorBox, h } from "../dom.ts";
import { camel, RATINGS, type RatingName, ratingLabel, usd } from "../format.ts";

interface Row {
  date: string;
  stock: { id: string; ticker: string; name: string; marketCap: string | null; sector: string; industry: string };
  [rating: string]: unknown;
}

const PAGE = 50;
const state = {
  search: "",
  date: "",
  order: "-total_rating",
  sector: "",
  industry: "",
  ranges: {} as Partial<Record<RatingName, [string, string]>>,
  page: 0,
};
let rows: Row[] = [];
let loadedKey = "";

function rangesParam(): string | undefined {
  const out: Record<string, [number, number]> = {};
  for (const [k, [lo, hi]] of Object.entries(state.ranges) as [RatingName, [string, string]][])
    if (lo !== "" || hi !== "") out[k] = [lo === "" ? 0 : Number(lo), hi === "" ? 10 : Number(hi)];
  return Object.keys(out).length ? JSON.stringify(out) : undefined;
}

async function loadAll(): Promise<Row[]> {
  const params = { search: state.search, date: state.date, order_by: state.order, ranges: rangesParam() };
  const key = JSON.stringify(params);
  if (key === loadedKey) return rows;
  const all: Row[] = [];
  for (let offset = 0; ; offset += 200) {
    const page = await rest<Row[]>("stock_ratings", { ...params, limit: 200, offset });
    all.push(...page);
    if (page.length < 200) break;
  }
  rows = all;
  loadedKey = key;
  return all;
}

function sortButton(r: string): HTMLElement {
  const on = state.order.replace(/^-/, "") === r;
  const desc = state.order.startsWith("-");
  return h(
    "button",
    {
      type: "button",
      class: "sort",
      "data-sort": r,
      "aria-label": `Sort by ${ratingLabel(r)} rating${on && desc ? ", ascending" : ", descending"}`,
      onclick: () => {
        state.order = on && desc ? r : `-${r}`;
        state.page = 0;
        // the table is drawn anew: keep the keyboard where it was
        void refresh().then(() => results.querySelector<HTMLElement>(`button[data-sort="${r}"]`)?.focus());
      },
    },
    ratingLabel(r),
    on ? (desc ? " ▼" : " ▲") : "",
  );
}

function resultTable(shown: Row[]): HTMLElement {
  const head = ["Ticker", "Name", "Sector", "Industry", "Market cap (USD)"];
  return h(
    "table",
    { class: "data screener" },
    h("caption", null, `Stock ratings on ${shown[0]?.date ?? "–"}`),
    h(
      "thead",
      null,
      h(
        "tr",
        null,
        head.map((c) => h("th", { scope: "col" }, c)),
        RATINGS.map((r) => h("th", { scope: "col", "aria-sort": ariaSort(r) }, sortButton(r))),
      ),
    ),
    h(
      "tbody",
      null,
      shown.map((x) =>
        h(
          "tr",
          null,
          h("th", { scope: "row" }, h("a", { href: `#/stock/${encodeURIComponent(x.stock.ticker)}` }, x.stock.ticker)),
          h("td", null, x.stock.name),
          h("td", null, x.stock.sector),
          h("td", null, x.stock.industry),
          h("td", { class: "num" }, usd(x.stock.marketCap)),
          RATINGS.map((r) => h("td", { class: "num" }, String(x[camel(r)] ?? "–"))),
        ),
      ),
    ),
  );
}

function ariaSort(r: string): string {
  if (state.order.replace(/^-/, "") !== r) return "none";
  return state.order.startsWith("-") ? "descending" : "ascending";
}

let results: HTMLElement;
let sectorSel: HTMLSelectElement;
let industrySel: HTMLSelectElement;

function fillOptions(sel: HTMLSelectElement, values: string[], current: string, all: string) {
  sel.replaceChildren(
    h("option", { value: "" }, all),
    ...values.map((v) => h("option", { value: v, selected: v === current }, v)),
  );
}

async function refresh(): Promise<void> {
  results.setAttribute("aria-busy", "true");
  try {
    const all = await loadAll();
    fillOptions(sectorSel, [...new Set(all.map((r) => r.stock.sector))].sort(), state.sector, "All sectors");
    const inSector = all.filter((r) => !state.sector || r.stock.sector === state.sector);
    const industries = [...new Set(inSector.map((r) => r.stock.industry))].sort();
    fillOptions(industrySel, industries, state.industry, "All industries");
    const kept = inSector.filter((r) => !state.industry || r.stock.industry === state.industry);
    const pages = Math.max(1, Math.ceil(kept.length / PAGE));
    state.page = Math.min(state.page, pages - 1);
    const shown = kept.slice(state.page * PAGE, (state.page + 1) * PAGE);
    results.replaceChildren(
      h("p", { class: "count", "aria-live": "polite" }, `${kept.length} stocks · page ${state.page + 1} of ${pages}`),
      h("div", { class: "scroll" }, resultTable(shown)),
      pager(pages),
    );
  } catch (e) {
    results.replaceChildren(errorBox(e));
  }
  results.removeAttribute("aria-busy");
}

function pager(pages: number): HTMLElement {
  const go = (p: number) => () => {
    state.page = p;
    void refresh();
  };
  return h(
    "nav",
    { class: "pager", "aria-label": "Pages" },
    h("button", { type: "button", disabled: state.page === 0, onclick: go(state.page - 1) }, "Previous"),
    h("button", { type: "button", disabled: state.page >= pages - 1, onclick: go(state.page + 1) }, "Next"),
  );
}

function rangeInputs(): HTMLElement {
  const field = (r: RatingName, i: 0 | 1) =>
    h("input", {
      type: "number",
      min: 0,
      max: 10,
      step: 0.5,
      id: `range-${r}-${i ? "max" : "min"}`,
      "aria-label": `${ratingLabel(r)} rating ${i ? "at most" : "at least"}`,
      value: state.ranges[r]?.[i] ?? "",
      placeholder: i ? "10" : "0",
      onchange: (e: Event) => {
        const cur = state.ranges[r] ?? ["", ""];
        cur[i] = (e.target as HTMLInputElement).value;
        state.ranges[r] = cur;
        state.page = 0;
        void refresh();
      },
    });
  return h(
    "fieldset",
    { class: "ranges" },
    h("legend", null, "Rating ranges (0 to 10)"),
    RATINGS.map((r) => h("div", { class: "range" }, h("span", null, ratingLabel(r)), field(r, 0), "–", field(r, 1))),
  );
}

function controls(): HTMLElement {
  const set = (k: "search" | "date" | "sector" | "industry") => (e: Event) => {
    state[k] = (e.target as HTMLInputElement).value;
    if (k === "sector") state.industry = "";
    state.page = 0;
    void refresh();
  };
  sectorSel = h("select", { id: "sector", onchange: set("sector") });
  industrySel = h("select", { id: "industry", onchange: set("industry") });
  return h(
    "form",
    { class: "controls", role: "search", onsubmit: (e: Event) => e.preventDefault() },
    h(
      "label",
      { class: "field" },
      "Search ",
      h("input", { id: "search", type: "search", value: state.search, onchange: set("search") }),
    ),
    h(
      "label",
      { class: "field" },
      "As of ",
      h("input", { id: "as-of", type: "date", value: state.date, onchange: set("date") }),
    ),
    h("label", { class: "field" }, "Sector ", sectorSel),
    h("label", { class: "field" }, "Industry ", industrySel),
    rangeInputs(),
  );
}

export async function screenerPage(main: HTMLElement): Promise<void> {
  results = h("div", { id: "results" });
  main.replaceChildren(h("h1", { tabindex: "-1" }, "Screener"), controls(), results);
  await refresh();
  main.dataset.state = "ready";
}
