// uPlot wrappers: a canvas per chart, sized to its container and resized with it.
import uPlot from "uplot";
import { PALETTE } from "./figure.ts";

export interface Line {
  label: string;
  values: (number | null)[];
}

export interface PlotOptions {
  /** x values: seconds since the epoch when `time`, plain numbers otherwise */
  xs: number[];
  lines: Line[];
  yFmt: (v: number) => string;
  xFmt?: (v: number) => string;
  time?: boolean;
  bars?: boolean;
  fill?: boolean;
  height?: number;
}

const observer =
  typeof ResizeObserver === "undefined"
    ? null
    : new ResizeObserver((entries) => {
        for (const e of entries) {
          const u = plots.get(e.target);
          const w = Math.floor(e.contentRect.width);
          if (u && w > 0 && w !== u.width) u.setSize({ width: w, height: u.height });
        }
      });
const plots = new WeakMap<Element, uPlot>();

function seriesOf(o: PlotOptions): uPlot.Series[] {
  return o.lines.map((l, i) => {
    const color = PALETTE[i % PALETTE.length];
    const barSize = o.lines.length > 1 && i > 0 ? 0.45 : 0.85;
    return {
      label: l.label,
      stroke: color,
      width: o.bars ? 0 : 1.5,
      fill: o.bars ? `${color}b0` : o.fill && i === 0 ? `${color}33` : undefined,
      paths: o.bars ? uPlot.paths.bars?.({ size: [barSize, 60], align: 0 }) : undefined,
      points: { show: false },
      spanGaps: false,
      value: (_u: uPlot, v: number | null) => (v === null ? "–" : o.yFmt(v)),
    };
  });
}

/** Draws into `el` (which must be in the document, for its width). */
export function plot(el: HTMLElement, o: PlotOptions): uPlot {
  const width = Math.max(280, el.clientWidth || 600);
  const opts: uPlot.Options = {
    width,
    height: o.height ?? 240,
    scales: { x: { time: o.time ?? true } },
    series: [
      { label: o.time === false ? "x" : "date", value: o.xFmt && ((_u, v) => (v === null ? "–" : o.xFmt!(v))) },
      ...seriesOf(o),
    ],
    axes: [
      o.xFmt ? { values: (_u, vals) => vals.map((v) => o.xFmt!(v)) } : {},
      { values: (_u, vals) => vals.map((v) => o.yFmt(v)), size: 72 },
    ],
    cursor: { drag: { x: true, y: false } },
    legend: { live: true },
  };
  const u = new uPlot(opts, [o.xs, ...o.lines.map((l) => l.values)] as uPlot.AlignedData, el);
  plots.set(el, u);
  observer?.observe(el);
  return u;
}
