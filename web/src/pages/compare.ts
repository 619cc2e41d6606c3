// The compare view (issue #41): up to 10 stocks, or up to 10 portfolios, side by side — one metric
// table with a column each and the nine charts with a line each, over their common period (REST's
// `compare`, docs/api/rest.md). The URL keeps the pick: #/compare/stock/AA,MSFT or
// #/compare/portfolio/101,102. The API compares subjects of one kind, so the view does too.
import { benchmarkPicker, renderAnalytics } from "../analytics.ts";
import { h } from "../dom.ts";

const MAX = 10;

/** The ids of the hash's list: comma-separated, blanks and repeats dropped, at most 10. */
export const compareList = (arg: string | undefined) =>
  [...new Set((arg ?? "").split(",").map((x) => x.trim()))].filter(Boolean).slice(0, MAX);

function pickForm(kind: "stock" | "portfolio", ids: string[]): HTMLFormElement {
  const kindSel = h(
    "select",
    { id: "compare-kind", name: "kind" },
    h("option", { value: "stock", selected: kind === "stock" }, "Stocks (tickers)"),
    h("option", { value: "portfolio", selected: kind === "portfolio" }, "Portfolios (ids)"),
  );
  const input = h("input", {
    id: "compare-ids",
    name: "ids",
    value: ids.join(", "),
    placeholder: "AA, MSFT, …",
    "aria-describedby": "compare-hint",
  });
  const form = h(
    "form",
    { class: "controls", "aria-label": "What to compare" },
    h("label", { class: "field" }, "Compare ", kindSel),
    h("label", { class: "field" }, "Up to 10, comma-separated ", input),
    h("button", { type: "submit" }, "Compare"),
    h("p", { id: "compare-hint", class: "hint" }, "The first is the subject; the others are added beside it."),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const list = compareList(input.value);
    location.hash = `#/compare/${kindSel.value}/${list.map(encodeURIComponent).join(",")}`;
  });
  return form;
}

export async function comparePage(main: HTMLElement, kindArg: string | undefined, idsArg: string | undefined) {
  const kind = kindArg === "portfolio" ? "portfolio" : "stock";
  const ids = compareList(idsArg && decodeURIComponent(idsArg));
  const body = h("section", { id: "analytics", "aria-label": "Performance" });
  const controls = h("div", { class: "controls" });
  main.replaceChildren(h("h1", { tabindex: "-1" }, "Compare"), pickForm(kind, ids), controls, body);
  if (ids.length === 0) {
    main.dataset.state = "ready";
    return;
  }
  const [first, ...rest] = ids;
  const subj = { kind, id: first } as const;
  const picker = await benchmarkPicker("1", (b) => void renderAnalytics(body, subj, b, rest));
  controls.append(picker);
  await renderAnalytics(body, subj, (picker.querySelector("select") as HTMLSelectElement).value, rest);
  main.dataset.state = "ready";
}
