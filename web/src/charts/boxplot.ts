// Box plots as SVG (uPlot draws series, not boxes): one box per period, whiskers at the
// published whiskerLow/whiskerHigh, the median as a line, the mean as a dot.
import { pct } from "../format.ts";

export interface Box {
  period: string;
  min: number;
  q1: number;
  median: number;
  q3: number;
  max: number;
  mean: number;
  whiskerLow: number;
  whiskerHigh: number;
}

const NS = "http://www.w3.org/2000/svg";
/** An SVG element with its attributes (and text, always as text). */
export function svg(tag: string, attrs: Record<string, string | number>, text?: string): SVGElement {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

export function boxplot(boxes: Box[], label: string): SVGSVGElement {
  const W = 600;
  const H = 260;
  const pad = { l: 60, r: 10, t: 10, b: 30 };
  const lo = Math.min(...boxes.map((b) => b.whiskerLow));
  const hi = Math.max(...boxes.map((b) => b.whiskerHigh));
  const y = (v: number) => pad.t + ((hi - v) / (hi - lo || 1)) * (H - pad.t - pad.b);
  const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": label, class: "boxplot" });
  for (const t of [lo, (lo + hi) / 2, hi, 0].filter((v) => v >= lo && v <= hi)) {
    root.append(svg("line", { x1: pad.l, x2: W - pad.r, y1: y(t), y2: y(t), class: "grid" }));
    root.append(svg("text", { x: pad.l - 4, y: y(t) + 4, "text-anchor": "end" }, pct(t, 1)));
  }
  const step = (W - pad.l - pad.r) / boxes.length;
  boxes.forEach((b, i) => {
    const cx = pad.l + step * (i + 0.5);
    const bw = Math.min(60, step * 0.5);
    root.append(svg("line", { x1: cx, x2: cx, y1: y(b.whiskerHigh), y2: y(b.whiskerLow), class: "whisker" }));
    root.append(svg("rect", { x: cx - bw / 2, y: y(b.q3), width: bw, height: Math.max(1, y(b.q1) - y(b.q3)) }));
    root.append(svg("line", { x1: cx - bw / 2, x2: cx + bw / 2, y1: y(b.median), y2: y(b.median), class: "median" }));
    root.append(svg("circle", { cx, cy: y(b.mean), r: 3 }));
    root.append(svg("text", { x: cx, y: H - 8, "text-anchor": "middle" }, b.period));
  });
  return root as SVGSVGElement;
}
