// The stock tearsheet: identity and latest ratings, the rating history, metrics and the nine
// series against a chosen benchmark, and the financial statements.

import { benchmarkPicker, downloads, renderAnalytics } from "../analytics.ts";
import { gql, rest } from "../api.ts";
import { figure } from "../charts/figure.ts";
import { plot } from "../charts/plot.ts";
import { errorBox, h, table } from "../dom.ts";
import { camel, dateSec, num, RATINGS, ratingLabel, usd } from "../format.ts";
import { financialsSection } from "./financials.ts";

type Rating = Record<string, string> & { date: string };
interface Component {
  rating: string;
  factor: string;
  raw: number | null;
  score: number | null;
  fiscalYear: number | null;
  publishDate: string | null;
}
interface Rated {
  date: string;
  stock: { ticker: string; name: string; marketCap: string | null; sector: string; industry: string };
  components?: Component[];
}

const HISTORY = `query History($t: String!, $after: String) {
  stock(ticker: $t) { ratings(first: 200, after: $after) {
    edges { node { date ${RATINGS.map(camel).join(" ")} } } pageInfo { hasNextPage endCursor } } } }`;

async function ratingHistory(ticker: string): Promise<Rating[]> {
  const out: Rating[] = [];
  let after: string | null = null;
  for (let i = 0; i < 20; i++) {
    type Page = { edges: { node: Rating }[]; pageInfo: { hasNextPage: boolean; endCursor: string } };
    const d: { stock: { ratings: Page } | null } = await gql(HISTORY, { t: ticker, after });
    const page = d.stock?.ratings;
    if (!page) break;
    out.push(...page.edges.map((e) => e.node));
    if (!page.pageInfo.hasNextPage) break;
    after = page.pageInfo.endCursor;
  }
  return out;
}

function historyFigure(rows: Rating[]) {
  const lines = RATINGS.map((r) => ({
    label: ratingLabel(r),
    values: rows.map((x) => (x[camel(r)] == null ? null : Number(x[camel(r)]))),
  }));
  const box = h("div", { class: "plot" });
  const el = figure(
    {
      id: "chart-ratings",
      title: "Rating history",
      units: "x: rating date · y: rating, 0 to 10",
      head: ["Date", ...lines.map((l) => l.label)],
      rows: () => rows.map((x) => [x.date, ...RATINGS.map((r) => x[camel(r)] ?? "–")]),
    },
    box,
  );
  return { el, draw: () => plot(box, { xs: rows.map((x) => dateSec(x.date)), lines, yFmt: (v) => num(v, 1) }) };
}

const words = (snake: string) => snake.replaceAll("_", " ");

/** Why the stock is rated as it is: every factor's raw value, score and statement (docs/ratings.md). */
function componentsTable(r: Rated): HTMLElement {
  const list = r.components ?? [];
  if (list.length === 0)
    return h(
      "p",
      { class: "note", id: "rating-components" },
      "Vendor ratings: the source supplies them, no components.",
    );
  const rows = list.map((c) => [
    ratingLabel(c.rating),
    words(c.factor),
    c.raw === null ? "–" : num(c.raw, 4),
    c.score === null ? "no input" : num(c.score, 2),
    c.fiscalYear === null ? "prices" : `FY ${c.fiscalYear}, published ${c.publishDate}`,
  ]);
  return h(
    "details",
    { id: "rating-components" },
    h("summary", null, `Rating components on ${r.date}`),
    h(
      "div",
      { class: "scroll" },
      table(null, ["Rating", "Factor", "Raw value", "Score (0–10)", "From"], rows, "data components"),
    ),
  );
}

function header(r: Rated & Record<string, string>): HTMLElement {
  return h(
    "div",
    { class: "summary" },
    h("p", null, `${r.stock.sector} · ${r.stock.industry} · market cap ${usd(r.stock.marketCap)} USD`),
    h(
      "div",
      { class: "scroll" },
      table(`Ratings on ${r.date}`, RATINGS.map(ratingLabel), [RATINGS.map((k) => r[camel(k)] ?? "–")], "data"),
    ),
    componentsTable(r),
    downloads("Ratings", `stock_ratings/${encodeURIComponent(r.stock.ticker)}`, {}, `${r.stock.ticker}-ratings`),
  );
}

export async function stockPage(main: HTMLElement, ticker: string): Promise<void> {
  performance.mark("tearsheet-start");
  // every read starts now, in parallel; each part is drawn when its own reads are in
  const ratingP = rest<Rated & Record<string, string>>(`stock_ratings/${encodeURIComponent(ticker)}`, {
    include: "components",
  });
  const historyP = ratingHistory(ticker);
  const title = h("h1", { tabindex: "-1" }, ticker);
  const head = h("div", null);
  const hist = h("section", { "aria-label": "Rating history" });
  const body = h("section", { id: "analytics", "aria-label": "Performance" });
  const controls = h("div", { class: "controls" });
  main.replaceChildren(title, head, hist, h("h2", null, "Performance and risk"), controls, body);
  const subj = { kind: "stock" as const, id: ticker };
  const analytics = benchmarkPicker("1", (id) => void renderAnalytics(body, subj, id)).then((picker) => {
    controls.append(picker);
    return renderAnalytics(body, subj, (picker.querySelector("select") as HTMLSelectElement).value);
  });
  // the statements are below the charts: read and laid out once the charts are drawn
  const financials = h("div", null);
  main.append(financials);
  void analytics.finally(() => financials.replaceWith(financialsSection(ticker)));
  try {
    const r = await ratingP;
    title.textContent = `${r.stock.ticker} — ${r.stock.name}`;
    head.append(header(r));
  } catch (e) {
    head.append(errorBox(e));
  }
  try {
    const f = historyFigure(await historyP);
    hist.append(f.el);
    f.draw();
  } catch (e) {
    hist.append(errorBox(e));
  }
  await analytics;
  performance.mark("tearsheet-done");
  main.dataset.state = "ready";
}
