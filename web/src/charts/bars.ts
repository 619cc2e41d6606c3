// Bars from zero as SVG (uPlot's bars start at the axis minimum, which makes small differences look
// large): one bar per value, a zero line, the value written above or below each bar.
import { svg } from "./boxplot.ts";

export function bars(values: (number | null)[], labels: string[], fmt: (v: number) => string, aria: string) {
  const W = 600;
  const H = 200;
  const pad = { l: 56, r: 10, t: 18, b: 26 };
  const finite = values.filter((v): v is number => v !== null && Number.isFinite(v));
  const lo = Math.min(0, ...finite);
  const hi = Math.max(0, ...finite);
  const y = (v: number) => pad.t + ((hi - v) / (hi - lo || 1)) * (H - pad.t - pad.b);
  const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": aria, class: "bars" });
  for (const t of [...new Set([lo, 0, hi])]) {
    root.append(svg("line", { x1: pad.l, x2: W - pad.r, y1: y(t), y2: y(t), class: t === 0 ? "zero" : "grid" }));
    root.append(svg("text", { x: pad.l - 4, y: y(t) + 4, "text-anchor": "end" }, fmt(t)));
  }
  const step = (W - pad.l - pad.r) / values.length;
  values.forEach((v, i) => {
    const cx = pad.l + step * (i + 0.5);
    root.append(svg("text", { x: cx, y: H - 8, "text-anchor": "middle" }, labels[i]));
    if (v === null || !Number.isFinite(v)) return;
    const bw = Math.min(70, step * 0.6);
    const top = Math.min(y(v), y(0));
    root.append(
      svg("rect", {
        x: cx - bw / 2,
        y: top,
        width: bw,
        height: Math.max(1, Math.abs(y(v) - y(0))),
        class: v < 0 ? "neg" : "pos",
      }),
    );
    root.append(svg("text", { x: cx, y: v < 0 ? y(v) + 13 : y(v) - 4, "text-anchor": "middle" }, fmt(v)));
  });
  return root;
}
