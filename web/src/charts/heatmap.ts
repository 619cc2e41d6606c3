// The monthly returns heatmap: a year × month grid, each cell coloured by its return (red below
// zero, green above, stronger further from zero) and labelled with it.
import { h } from "../dom.ts";
import { pct } from "../format.ts";

export interface MonthCell {
  year: number;
  month: number;
  return: number;
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

function colour(v: number, scale: number): string {
  const a = Math.min(1, Math.abs(v) / scale);
  return v < 0 ? `rgba(201, 42, 42, ${a.toFixed(2)})` : `rgba(43, 138, 62, ${a.toFixed(2)})`;
}

export function heatmap(cells: MonthCell[]): HTMLElement {
  const years = [...new Set(cells.map((c) => c.year))].sort((a, b) => b - a);
  const byKey = new Map(cells.map((c) => [`${c.year}-${c.month}`, c.return]));
  const scale = Math.max(0.02, ...cells.map((c) => Math.abs(c.return))) * 0.6;
  return h(
    "div",
    { class: "scroll" },
    h(
      "table",
      { class: "heatmap" },
      h(
        "thead",
        null,
        h(
          "tr",
          null,
          h("th", null, "Year"),
          MONTHS.map((m) => h("th", null, m)),
        ),
      ),
      h(
        "tbody",
        null,
        years.map((y) =>
          h(
            "tr",
            null,
            h("th", null, String(y)),
            MONTHS.map((_m, i) => {
              const v = byKey.get(`${y}-${i + 1}`);
              return v === undefined
                ? h("td", null, "")
                : h("td", { style: `background:${colour(v, scale)}` }, pct(v, 1));
            }),
          ),
        ),
      ),
    ),
  );
}
