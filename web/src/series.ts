// The nine performance series of a stock or portfolio, as the REST interface returns them, and
// how each becomes a figure.
import { type Box, boxplot } from "./charts/boxplot.ts";
import { figure } from "./charts/figure.ts";
import { heatmap, type MonthCell } from "./charts/heatmap.ts";
import { type Line, plot } from "./charts/plot.ts";
import { h } from "./dom.ts";
import { dateSec, num, pct } from "./format.ts";

export interface Point {
  date: string;
  return: number | null;
}
export interface Series {
  name: string;
  window?: number;
  data: Point[];
  bins?: { start: number; end: number; count: number }[];
}

export const SERIES_TYPES = [
  "cumulative_return",
  "drawdown",
  "monthly_heatmap",
  "yearly_returns",
  "histogram",
  "rolling_beta",
  "rolling_volatility",
  "rolling_sharpe",
  "boxplot",
] as const;
export type SeriesType = (typeof SERIES_TYPES)[number];

const TITLES: Record<SeriesType, [string, string]> = {
  cumulative_return: ["Cumulative return", "x: date · y: cumulative return, % of the start value"],
  drawdown: ["Drawdown (underwater)", "x: date · y: fall from the running peak, %"],
  monthly_heatmap: ["Monthly returns", "rows: year · columns: month · cells: the month's return, %"],
  yearly_returns: ["Yearly returns", "x: calendar year · y: the year's return, %"],
  histogram: ["Distribution of monthly returns", "x: monthly return, % (bin midpoint) · y: number of months"],
  rolling_beta: ["Rolling beta to the benchmark", "x: date · y: beta (no unit), 126- and 252-day windows"],
  rolling_volatility: ["Rolling volatility (126 days)", "x: date · y: annualised volatility, %"],
  rolling_sharpe: ["Rolling Sharpe ratio (126 days)", "x: date · y: annualised Sharpe ratio (no unit)"],
  boxplot: ["Return quantiles by period", "x: period · y: return, % (box: quartiles, line: median, dot: mean)"],
};

const label = (s: Series) => (s.window ? `${s.name} (${s.window} d)` : s.name);

/** One x axis for every series: the union of their dates (most share them all). */
export function align(list: Series[]): { dates: string[]; lines: Line[] } {
  const same = list.every((s) => s.data.length === list[0].data.length && s.data[0]?.date === list[0].data[0]?.date);
  const dates = same ? list[0].data.map((p) => p.date) : [...new Set(list.flatMap((s) => s.data.map((p) => p.date)))];
  if (!same) dates.sort();
  const lines = list.map((s) => {
    if (same) return { label: label(s), values: s.data.map((p) => p.return) };
    const by = new Map(s.data.map((p) => [p.date, p.return]));
    return { label: label(s), values: dates.map((d) => by.get(d) ?? null) };
  });
  return { dates, lines };
}

function timeFigure(type: SeriesType, list: Series[], fmt: (v: number) => string, fill = false) {
  const { dates, lines } = align(list);
  const box = h("div", { class: "plot" });
  const el = figure(
    {
      id: `chart-${type}`,
      title: TITLES[type][0],
      units: TITLES[type][1],
      head: ["Date", ...lines.map((l) => l.label)],
      rows: () => dates.map((d, i) => [d, ...lines.map((l) => (l.values[i] === null ? "–" : fmt(l.values[i]!)))]),
    },
    box,
  );
  return { el, draw: () => plot(box, { xs: dates.map(dateSec), lines, yFmt: fmt, fill }) };
}

function yearlyFigure(list: Series[]) {
  const { dates, lines } = align(list);
  const years = dates.map((d) => Number(d.slice(0, 4)));
  const box = h("div", { class: "plot" });
  const el = figure(
    {
      id: "chart-yearly_returns",
      title: TITLES.yearly_returns[0],
      units: TITLES.yearly_returns[1],
      head: ["Year", ...lines.map((l) => l.label)],
      rows: () => years.map((y, i) => [String(y), ...lines.map((l) => pct(l.values[i]))]),
    },
    box,
  );
  const draw = () =>
    plot(box, { xs: years, lines, yFmt: (v) => pct(v, 0), xFmt: (v) => String(v), time: false, bars: true });
  return { el, draw };
}

function histogramFigure(list: Series[]) {
  const bins = list[0].bins ?? [];
  const xs = bins.map((b) => (b.start + b.end) / 2);
  const lines = list.map((s) => ({ label: s.name, values: (s.bins ?? []).map((b) => b.count) }));
  const box = h("div", { class: "plot" });
  const el = figure(
    {
      id: "chart-histogram",
      title: TITLES.histogram[0],
      units: TITLES.histogram[1],
      head: ["Bin (monthly return)", ...lines.map((l) => `${l.label}: months`)],
      rows: () => bins.map((b, i) => [`${pct(b.start)} to ${pct(b.end)}`, ...lines.map((l) => l.values[i] ?? 0)]),
    },
    box,
  );
  const draw = () => plot(box, { xs, lines, yFmt: (v) => String(v), xFmt: (v) => pct(v, 0), time: false, bars: true });
  return { el, draw };
}

function heatmapFigure(list: Series[]) {
  const cells = list[0].data as unknown as MonthCell[];
  const el = figure(
    {
      id: "chart-monthly_heatmap",
      title: `${TITLES.monthly_heatmap[0]}: ${list[0].name}`,
      units: TITLES.monthly_heatmap[1],
      head: ["Month", ...list.map((s) => s.name)],
      rows: () => {
        const { dates, lines } = align(list);
        return dates.map((d, i) => [d.slice(0, 7), ...lines.map((l) => pct(l.values[i]))]);
      },
    },
    heatmap(cells),
  );
  return { el, draw: () => {} };
}

function boxFigure(list: Series[]) {
  const boxes = list[0].data as unknown as Box[];
  const cols = ["min", "whiskerLow", "q1", "median", "q3", "whiskerHigh", "max", "mean"] as const;
  const el = figure(
    {
      id: "chart-boxplot",
      title: `${TITLES.boxplot[0]}: ${list[0].name}`,
      units: TITLES.boxplot[1],
      head: ["Series · period", ...cols],
      rows: () =>
        list.flatMap((s) =>
          (s.data as unknown as Box[]).map((b) => [`${s.name} · ${b.period}`, ...cols.map((c) => pct(b[c]))]),
        ),
    },
    h("div", { class: "plot" }, boxplot(boxes, `${TITLES.boxplot[0]} of ${list[0].name}`)),
  );
  return { el, draw: () => {} };
}

/** The figure of one series type, and a function drawing it once the figure is in the document. */
export function seriesFigure(type: SeriesType, list: Series[]): { el: HTMLElement; draw: () => unknown } {
  if (list.length === 0 || list[0].data.length === 0)
    return { el: h("p", { class: "empty" }, `${TITLES[type][0]}: no data`), draw: () => {} };
  switch (type) {
    case "cumulative_return":
    case "drawdown":
    case "rolling_volatility":
      return timeFigure(type, list, (v) => pct(v, 1), type === "drawdown");
    case "rolling_beta":
    case "rolling_sharpe":
      return timeFigure(type, list, (v) => num(v, 2));
    case "yearly_returns":
      return yearlyFigure(list);
    case "histogram":
      return histogramFigure(list);
    case "monthly_heatmap":
      return heatmapFigure(list);
    case "boxplot":
      return boxFigure(list);
  }
}
