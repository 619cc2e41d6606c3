// A tiny element builder: h("a", { href: "#/" }, "text", child). Text is always set as text
// (never HTML), so API strings cannot inject markup.
type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | null | undefined | EventListener>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs | null = null,
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (attrs)
    for (const [k, v] of Object.entries(attrs)) {
      if (v === null || v === undefined || v === false) continue;
      if (typeof v === "function") el.addEventListener(k.slice(2).toLowerCase(), v);
      else if (k === "class") el.className = String(v);
      else if (v === true) el.setAttribute(k, "");
      else el.setAttribute(k, String(v));
    }
  append(el, children);
  return el;
}

export function append(el: Element, children: (Child | Child[])[]): void {
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(typeof c === "number" ? String(c) : c);
  }
}

/** A <table> of header cells and rows of text cells (the first column as row headers). */
export function table(caption: string | null, head: string[], rows: Child[][], cls = "data"): HTMLTableElement {
  return h(
    "table",
    { class: cls },
    caption ? h("caption", null, caption) : null,
    h(
      "thead",
      null,
      h(
        "tr",
        null,
        head.map((c) => h("th", { scope: "col" }, c)),
      ),
    ),
    h(
      "tbody",
      null,
      rows.map((r) =>
        h(
          "tr",
          null,
          r.map((c, i) => (i === 0 ? h("th", { scope: "row" }, c) : h("td", null, c))),
        ),
      ),
    ),
  );
}

/** A <details> whose table is built the first time it opens: a daily series is thousands of rows. */
export function lazyTable(summary: string, build: () => HTMLTableElement): HTMLDetailsElement {
  const d = h("details", { class: "table-alt" }, h("summary", null, summary));
  d.addEventListener("toggle", () => {
    if (d.open && d.childElementCount === 1) d.append(h("div", { class: "scroll" }, build()));
  });
  return d;
}

export function errorBox(e: unknown): HTMLElement {
  return h("p", { class: "error", role: "alert" }, e instanceof Error ? e.message : String(e));
}
