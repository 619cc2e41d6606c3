// The tearsheet body shared by stocks and portfolios: the metric table beside a benchmark and the
// nine series as figures, all read from the REST interface in parallel. When every figure is drawn
// the page sets the performance mark "tearsheet-charts" (the benchmark measures it).
import { type DownloadFormat, download, rest } from "./api.ts";
import { errorBox, h, table } from "./dom.ts";
import { SERIES_TYPES, type Series, seriesFigure } from "./series.ts";

export interface Subject {
  kind: "stock" | "portfolio";
  id: string;
}
export interface Benchmark {
  id: string;
  name: string;
}
type MetricRow = { metric: string } & Record<string, string>;

const paths = (s: Subject) =>
  s.kind === "stock"
    ? { metrics: `stock_metrics/${encodeURIComponent(s.id)}`, perf: `stock_performance/${encodeURIComponent(s.id)}` }
    : { metrics: `portfolio_metrics/${s.id}`, perf: `portfolio_performance/${s.id}` };

/** "Label: CSV · Arrow" — two buttons saving the REST read `path` in that format as `<base>.csv|.arrow`. */
export function downloads(label: string, path: string, params: Record<string, string>, base: string): HTMLElement {
  const button = (format: DownloadFormat, text: string) =>
    h(
      "button",
      {
        type: "button",
        class: `download ${format}`,
        "aria-label": `${label}: download ${text}`,
        onclick: () => void download(path, params, format, `${base}.${format}`).catch((e) => alert(e.message)),
      },
      text,
    );
  return h("p", { class: "downloads" }, `${label}: `, button("csv", "CSV"), " ", button("arrow", "Arrow"));
}

export function metricTable(rows: MetricRow[]): HTMLTableElement {
  const cols = rows.length ? Object.keys(rows[0]).filter((k) => k !== "metric") : [];
  return table(
    "Metrics",
    ["Metric", ...cols],
    rows.map((r) => [r.metric, ...cols.map((c) => r[c])]),
    "data metrics",
  );
}

let benchmarksCache: Promise<Benchmark[]> | null = null;
export const benchmarks = () => (benchmarksCache ??= rest<Benchmark[]>("benchmarks"));

/**
 * Fills `root` with the metrics and charts of `subj` against `benchmark` (and, side by side, the
 * subjects of the same kind in `compare`); resolves once all are drawn.
 */
export async function renderAnalytics(
  root: HTMLElement,
  subj: Subject,
  benchmark: string,
  compare: string[] = [],
): Promise<void> {
  const p = paths(subj);
  const bp: Record<string, string> = compare.length ? { benchmark, compare: compare.join(",") } : { benchmark };
  const metricsP = rest<MetricRow[]>(p.metrics, bp);
  const seriesP = SERIES_TYPES.map((type) => rest<Series[]>(p.perf, { type, ...bp }));
  const metricsBox = h("section", { class: "metrics-box", "aria-label": "Metrics" });
  const charts = h("div", { class: "charts" });
  root.replaceChildren(metricsBox, charts);
  try {
    const rows = await metricsP;
    metricsBox.append(
      h("div", { class: "scroll" }, metricTable(rows)),
      downloads("Metrics", p.metrics, bp, `${subj.id}-metrics`),
    );
  } catch (e) {
    metricsBox.append(errorBox(e));
  }
  // Each figure goes in as soon as its series arrives, in the tearsheet's order.
  const slots = SERIES_TYPES.map(() => charts.appendChild(h("div", { class: "slot" })));
  await Promise.all(
    SERIES_TYPES.map(async (type, i) => {
      try {
        const f = seriesFigure(type, await seriesP[i]);
        f.el.append(downloads("Series", p.perf, { type, ...bp }, `${subj.id}-${type}`));
        slots[i].replaceWith(f.el);
        f.draw();
      } catch (e) {
        slots[i].replaceWith(errorBox(e));
      }
    }),
  );
  performance.mark("tearsheet-charts");
  root.dataset.state = "ready";
}

/** A <select> of the benchmarks; `onChange` gets the chosen id. */
export async function benchmarkPicker(current: string, onChange: (id: string) => void): Promise<HTMLElement> {
  const list = await benchmarks();
  const sel = h(
    "select",
    { id: "benchmark", onchange: (e: Event) => onChange((e.target as HTMLSelectElement).value) },
    list.map((b) => h("option", { value: b.id, selected: b.id === current }, b.name)),
  );
  return h("label", { class: "field" }, "Benchmark ", sel);
}
