// Every chart is a <figure>: a title naming the axes' units, the drawing, and the same figures
// as a table in a <details> (built when opened).
import { h, lazyTable, table } from "../dom.ts";

export interface FigureSpec {
  id: string;
  title: string;
  /** e.g. "x: date · y: return, %" */
  units: string;
  head: string[];
  rows: () => (string | number)[][];
}

export function figure(spec: FigureSpec, drawing: HTMLElement): HTMLElement {
  return h(
    "figure",
    { class: "chart", id: spec.id, "aria-labelledby": `${spec.id}-title` },
    h("h3", { id: `${spec.id}-title` }, spec.title),
    h("p", { class: "units" }, spec.units),
    drawing,
    lazyTable(`${spec.title}: table`, () => table(null, spec.head, spec.rows())),
  );
}

export const PALETTE = ["#1f6feb", "#d9480f", "#2b8a3e", "#7048e8", "#c2255c", "#0c8599", "#e67700", "#495057"];
