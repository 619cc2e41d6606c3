// The Ratings page (#/ratings/H): what every rating the snapshot serves predicted at horizon H months
// (REST rating_evidence): the summary table, the IC series per rating, each rating's quintile bars,
// and the 12-1 momentum baseline beside them. Definitions: docs/ratings.md, "The evidence".
import { downloads } from "../analytics.ts";
import { rest } from "../api.ts";
import { bars } from "../charts/bars.ts";
import { figure } from "../charts/figure.ts";
import { plot } from "../charts/plot.ts";
import { h, table } from "../dom.ts";
import { dateSec, num, pct, ratingLabel } from "../format.ts";

export interface Evidence {
  rating: string;
  horizon: number;
  dates: number;
  meanIc: number | null;
  icStd: number | null;
  icir: number | null;
  tStat: number | null;
  hitRate: number | null;
  quintileReturns: number[];
  spread: number | null;
  topTurnover: number | null;
  ic: { date: string; ic: number; stocks: number }[];
}

export const HORIZONS = [1, 3, 6, 12];
const BASELINE = "momentum_12_1_baseline";
const label = (r: string) => (r === BASELINE ? "Momentum 12-1 (baseline)" : ratingLabel(r));

function horizonPicker(current: number): HTMLElement {
  const select = h(
    "select",
    { id: "horizon", onchange: (e: Event) => (location.hash = `#/ratings/${(e.target as HTMLSelectElement).value}`) },
    HORIZONS.map((m) => h("option", { value: m, selected: m === current }, `${m} month${m > 1 ? "s" : ""} forward`)),
  );
  return h("div", { class: "controls" }, h("label", { for: "horizon" }, "Horizon "), select);
}

function summaryTable(rows: Evidence[]): HTMLElement {
  const head = ["Rating", "Dates", "Mean IC", "IC std", "ICIR", "t", "Hit rate", "Q1", "Q2", "Q3", "Q4", "Q5"];
  const body = rows.map((r) => [
    label(r.rating),
    r.dates,
    num(r.meanIc, 4),
    num(r.icStd, 4),
    num(r.icir, 2),
    num(r.tStat, 2),
    pct(r.hitRate, 0),
    ...[0, 1, 2, 3, 4].map((q) => pct(r.quintileReturns[q], 2)),
  ]);
  const more = rows.map((r) => [label(r.rating), pct(r.spread, 2), pct(r.topTurnover, 0)]);
  return h(
    "div",
    { class: "scroll" },
    table("Information coefficient and quintile mean forward returns", head, body, "data evidence"),
    table("Spread and turnover", ["Rating", "Spread (Q5 − Q1)", "Top quintile turnover"], more, "data evidence-more"),
  );
}

/** The IC series of every rating on one time axis (a rating missing a date: a gap). */
function icFigure(rows: Evidence[], horizon: number) {
  const dates = [...new Set(rows.flatMap((r) => r.ic.map((p) => p.date)))].sort();
  const lines = rows.map((r) => {
    const at = new Map(r.ic.map((p) => [p.date, p.ic]));
    return { label: label(r.rating), values: dates.map((d) => at.get(d) ?? null) };
  });
  const box = h("div", { class: "plot" });
  const el = figure(
    {
      id: "chart-ic",
      title: `IC per rating date, ${horizon}-month forward returns`,
      units: "x: rating date · y: Spearman rank correlation of rating and forward return",
      head: ["Date", ...lines.map((l) => l.label)],
      rows: () => dates.map((d, i) => [d, ...lines.map((l) => num(l.values[i], 4))]),
    },
    box,
  );
  return { el, draw: () => plot(box, { xs: dates.map(dateSec), lines, yFmt: (v) => num(v, 2), height: 280 }) };
}

/** One rating's five quintile means as bars from zero. */
function quintileFigure(r: Evidence, i: number): HTMLElement {
  const q = [0, 1, 2, 3, 4];
  const drawing = bars(
    q.map((k) => r.quintileReturns[k] ?? null),
    q.map((k) => `Q${k + 1}`),
    (v) => pct(v, 2),
    `${label(r.rating)}: mean forward return by quintile`,
  );
  return figure(
    {
      id: `chart-quintiles-${i}`,
      title: `${label(r.rating)}: mean forward return by quintile`,
      units: "x: quintile of the rating, lowest first · y: mean forward return, %",
      head: ["Quintile", "Mean forward return"],
      rows: () => r.quintileReturns.map((v, k) => [`Q${k + 1}`, pct(v, 3)]),
    },
    h("div", { class: "plot" }, drawing),
  );
}

export async function ratingsPage(main: HTMLElement, arg?: string): Promise<void> {
  const horizon = HORIZONS.includes(Number(arg)) ? Number(arg) : 1;
  const rows = await rest<Evidence[]>("rating_evidence", { horizon });
  const ic = icFigure(rows, horizon);
  const quintiles = rows.filter((r) => r.dates > 0).map(quintileFigure);
  main.replaceChildren(
    h("h1", { tabindex: "-1" }, "Ratings: what they predicted"),
    h(
      "p",
      null,
      "Each rating date, the rank correlation (IC) of every rating with the stocks' forward returns over the " +
        "horizon, and the mean forward return of each rating quintile; the 12-1 month momentum baseline is the " +
        "simplest signal to beat. Horizons over a month overlap, so their dates are not independent; a t under 2 " +
        "is not evidence.",
    ),
    horizonPicker(horizon),
    h("h2", null, "Summary"),
    summaryTable(rows),
    downloads("Evidence", "rating_evidence", { horizon: String(horizon) }, `rating-evidence-${horizon}m`),
    h("h2", null, "IC series"),
    ic.el,
    h("h2", null, "Quintiles"),
    h("div", { class: "charts" }, quintiles),
  );
  ic.draw();
  main.dataset.state = "ready";
}
