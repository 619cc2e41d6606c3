// Create or edit one of the caller's portfolios (its selection rules) through createPortfolio /
// updatePortfolio; field errors appear beside the fields.
import { gql } from "../api.ts";
import { h } from "../dom.ts";
import { camel, RATINGS, ratingLabel } from "../format.ts";
import { errorSlot, field, type Payload, submit } from "../forms.ts";

export interface PortfolioRules {
  id?: string;
  name: string;
  description: string;
  rebalanceFrequency: number;
  maxStocks: number;
  maxStocksCriteria: string;
  maxStocksCriteriaOrder: string;
  maxSectorConcentration?: string | null;
  ranges: Record<string, [number, number]>;
}

type Result = Payload & { portfolio: { id: string; status: string } | null };
const OUT = "success errors { field messages } portfolio { id status }";
const CREATE = `mutation($i: CreatePortfolioInput!) { r: createPortfolio(input: $i) { ${OUT} } }`;
const UPDATE = `mutation($i: UpdatePortfolioInput!) { r: updatePortfolio(input: $i) { ${OUT} } }`;

function select(name: string, label: string, prefix: string, options: string[], current: string) {
  const id = `${prefix}-${name}`;
  return h(
    "div",
    { class: "form-field" },
    h("label", { for: id }, label),
    h(
      "select",
      { id, name },
      options.map((o) => h("option", { value: o, selected: o === current }, o)),
    ),
    errorSlot(name),
  );
}

function rangeFields(ranges: Record<string, [number, number]>): HTMLElement {
  return h(
    "fieldset",
    { class: "ranges" },
    h("legend", null, "Rating ranges (0 to 10; empty for no limit)"),
    RATINGS.map((r) => {
      const k = camel(r);
      const v = ranges[k];
      const input = (i: 0 | 1) =>
        h("input", {
          type: "number",
          min: 0,
          max: 10,
          step: 0.5,
          name: `range-${k}-${i}`,
          "aria-label": `${ratingLabel(r)} rating ${i ? "at most" : "at least"}`,
          value: v ? v[i] : "",
        });
      return h(
        "div",
        { class: "range" },
        h("span", null, ratingLabel(r)),
        input(0),
        "–",
        input(1),
        errorSlot(`ranges.${k}`),
      );
    }),
    errorSlot("ranges"),
  );
}

function readForm(form: HTMLFormElement): Record<string, unknown> {
  const v = (n: string) => (form.elements.namedItem(n) as HTMLInputElement).value.trim();
  const ranges: Record<string, [number, number]> = {};
  for (const r of RATINGS) {
    const k = camel(r);
    const lo = v(`range-${k}-0`);
    const hi = v(`range-${k}-1`);
    if (lo !== "" || hi !== "") ranges[k] = [lo === "" ? 0 : Number(lo), hi === "" ? 10 : Number(hi)];
  }
  const conc = v("maxSectorConcentration");
  return {
    name: v("name"),
    description: v("description"),
    rebalanceFrequency: Number(v("rebalanceFrequency")),
    maxStocks: Number(v("maxStocks")),
    maxStocksCriteria: v("maxStocksCriteria"),
    maxStocksCriteriaOrder: v("maxStocksCriteriaOrder"),
    maxSectorConcentration: conc === "" ? null : Number(conc),
    ranges,
  };
}

export function portfolioForm(p: PortfolioRules | null, onDone: (id: string) => void): HTMLFormElement {
  const prefix = p?.id ? `pf-${p.id}` : "pf-new";
  const form: HTMLFormElement = h(
    "form",
    { class: "card portfolio-form", id: prefix, "aria-label": p ? `Edit ${p.name}` : "New portfolio" },
    h("h3", null, p ? `Edit rules of ${p.name}` : "New portfolio"),
    field("Name", "name", { idPrefix: prefix, value: p?.name ?? "", required: true }),
    field("Description", "description", { idPrefix: prefix, value: p?.description ?? "" }),
    field("Rebalance every (months)", "rebalanceFrequency", {
      idPrefix: prefix,
      type: "number",
      value: p?.rebalanceFrequency ?? 1,
    }),
    field("Maximum stocks", "maxStocks", { idPrefix: prefix, type: "number", value: p?.maxStocks ?? 20 }),
    select(
      "maxStocksCriteria",
      "Select by",
      prefix,
      [...RATINGS, "market_cap"],
      p?.maxStocksCriteria ?? "total_rating",
    ),
    select(
      "maxStocksCriteriaOrder",
      "Order",
      prefix,
      ["descending", "ascending"],
      p?.maxStocksCriteriaOrder ?? "descending",
    ),
    field("Max sector concentration (0–1, empty: none)", "maxSectorConcentration", {
      idPrefix: prefix,
      type: "number",
      step: 0.05,
      value: p?.maxSectorConcentration ?? "",
    }),
    rangeFields(p?.ranges ?? {}),
    errorSlot("input"),
    h("button", { type: "submit" }, p ? "Save rules" : "Create portfolio"),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const i = readForm(form);
    const run = async () =>
      (await gql<{ r: Result }>(p?.id ? UPDATE : CREATE, { i: p?.id ? { portfolioId: p.id, ...i } : i })).r;
    void submit(form, run, (r) => onDone(r.portfolio?.id ?? p?.id ?? ""));
  });
  return form;
}
