// The portfolio tearsheet: rules, state (PENDING/READY/FAILED, polled while PENDING), holdings with
// weights and sector allocation, trades for a typed value, the rebalance history, and the metrics and
// nine series.

import { benchmarkPicker, downloads, renderAnalytics } from "../analytics.ts";
import { gql, rest } from "../api.ts";
import { errorBox, h, table } from "../dom.ts";
import { camel, pct, RATINGS, ratingLabel, usd } from "../format.ts";
import { type PortfolioRules, portfolioForm } from "./portfolio-form.ts";

interface Portfolio extends PortfolioRules {
  id: string;
  private: boolean;
  status: "PENDING" | "READY" | "FAILED";
  rebalanceRequestedAt: string | null;
  rebalanceFailedAt: string | null;
  previousRebalanceDate: string | null;
  nextRebalanceDate: string | null;
}
interface Holding {
  date: string;
  stock: { ticker: string; name: string; sector: string; industry: string };
  [k: string]: unknown;
}
interface Rebalance {
  date: string;
  holdingsCount: number;
  added: string[];
  removed: string[];
}
interface Trade {
  date: string;
  ticker: string;
  name: string;
  price: number;
  quantity: number;
  value: number;
  pct: number;
}

const Q = `query($id: ID!) { portfolio(id: $id) { id name description private status rebalanceRequestedAt
  rebalanceFailedAt previousRebalanceDate nextRebalanceDate rebalanceFrequency maxStocks maxStocksCriteria
  maxStocksCriteriaOrder maxSectorConcentration ranges { ${RATINGS.map(camel).join(" ")} } } }`;

async function load(id: string): Promise<Portfolio> {
  const d = await gql<{ portfolio: Portfolio | null }>(Q, { id });
  if (!d.portfolio) throw new Error(`no portfolio ${id}`);
  const r = d.portfolio.ranges as Record<string, [number, number] | null>;
  d.portfolio.ranges = Object.fromEntries(Object.entries(r).filter(([, v]) => v)) as Record<string, [number, number]>;
  return d.portfolio;
}

function stateLine(p: Portfolio): HTMLElement {
  const note =
    p.status === "PENDING"
      ? ` — rebalance asked at ${p.rebalanceRequestedAt ?? "?"}; checking every second`
      : p.status === "FAILED"
        ? ` — the rebalance failed at ${p.rebalanceFailedAt ?? "?"}`
        : "";
  return h(
    "p",
    { id: "portfolio-status", role: "status", class: `status ${p.status.toLowerCase()}` },
    `State: ${p.status}${note}`,
  );
}

function history(p: Portfolio): HTMLElement {
  return table(
    "Rebalance schedule",
    ["Event", "Date"],
    [
      ["Previous rebalance", p.previousRebalanceDate ?? "–"],
      ["Next rebalance", p.nextRebalanceDate ?? "–"],
      ["Rules changed (rebalance asked)", p.rebalanceRequestedAt ?? "–"],
      ["Rebalance failed", p.rebalanceFailedAt ?? "–"],
    ],
  );
}

async function holdingsSection(box: HTMLElement, id: string): Promise<void> {
  const [holdings, trades] = await Promise.all([
    rest<Holding[]>(`portfolio_holdings/${id}`, { limit: 200 }),
    rest<Trade[]>(`portfolio_trades/${id}`, { value: 1_000_000, allow_fractional: true }),
  ]);
  const weight = new Map(trades.map((t) => [t.ticker, t.pct]));
  const bySector = new Map<string, number>();
  for (const x of holdings)
    bySector.set(x.stock.sector, (bySector.get(x.stock.sector) ?? 0) + (weight.get(x.stock.ticker) ?? 0));
  const sectors = [...bySector].sort((a, b) => b[1] - a[1]);
  box.replaceChildren(
    h("h2", null, `Holdings on ${holdings[0]?.date ?? "–"} (${holdings.length})`),
    h(
      "div",
      { class: "scroll" },
      table(
        null,
        ["Ticker", "Name", "Sector", "Weight", ...RATINGS.map(ratingLabel)],
        holdings.map((x) => [
          h("a", { href: `#/stock/${encodeURIComponent(x.stock.ticker)}` }, x.stock.ticker),
          x.stock.name,
          x.stock.sector,
          pct(weight.get(x.stock.ticker)),
          ...RATINGS.map((r) => String(x[camel(r)] ?? "–")),
        ]),
        "data holdings",
      ),
    ),
    downloads("Holdings", `portfolio_holdings/${id}`, { limit: "200" }, `portfolio-${id}-holdings`),
    h("h3", null, "Sector allocation (% of the portfolio's value)"),
    h(
      "div",
      { class: "scroll" },
      table(
        null,
        ["Sector", "Weight", ""],
        sectors.map(([s, w]) => [s, pct(w), h("span", { class: "bar", style: `width:${(w * 100).toFixed(1)}%` })]),
        "data sectors",
      ),
    ),
  );
}

/** Every rebalance of the backtest, newest first, read a page of 200 at a time. */
async function rebalances(id: string): Promise<Rebalance[]> {
  const out: Rebalance[] = [];
  for (let offset = 0; ; offset += 200) {
    const page = await rest<Rebalance[]>(`portfolio_rebalances/${id}`, { limit: 200, offset });
    out.push(...page);
    if (page.length < 200) return out;
  }
}

const tickerList = (ts: string[]) =>
  ts.length ? ts.flatMap((t, i) => [i ? ", " : "", h("a", { href: `#/stock/${encodeURIComponent(t)}` }, t)]) : "–";

async function rebalanceSection(box: HTMLElement, id: string): Promise<void> {
  const list = await rebalances(id);
  box.replaceChildren(
    h("h2", null, `Rebalance history (${list.length})`),
    h(
      "div",
      { class: "scroll" },
      table(
        null,
        ["Date", "Holdings", "Added", "Removed"],
        list.map((r) => [
          r.date,
          String(r.holdingsCount),
          h("span", null, tickerList(r.added)),
          h("span", null, tickerList(r.removed)),
        ]),
        "data rebalances",
      ),
    ),
    downloads("Rebalances", `portfolio_rebalances/${id}`, { limit: "200" }, `portfolio-${id}-rebalances`),
  );
}

function tradesSection(id: string): HTMLElement {
  const out = h("div", { "aria-live": "polite" });
  const input = h("input", { id: "trade-value", type: "number", min: 1, step: 1, value: 100000 });
  const frac = h("input", { id: "trade-frac", type: "checkbox" });
  const form: HTMLFormElement = h(
    "form",
    { class: "controls" },
    h("label", { class: "field" }, "Portfolio value (USD) ", input),
    h("label", { class: "field" }, frac, " fractional shares"),
    h("button", { type: "submit" }, "Show trades"),
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const params = { value: input.value, allow_fractional: String(frac.checked) };
    try {
      const trades = await rest<Trade[]>(`portfolio_trades/${id}`, params);
      out.replaceChildren(
        table(
          `Buy orders for ${usd(input.value)} USD on ${trades[0]?.date ?? "–"}`,
          ["Ticker", "Name", "Price (USD)", "Quantity", "Value (USD)", "Weight"],
          trades.map((t) => [t.ticker, t.name, t.price.toFixed(2), String(t.quantity), t.value.toFixed(2), pct(t.pct)]),
        ),
        downloads("Trades", `portfolio_trades/${id}`, params, `portfolio-${id}-trades`),
      );
    } catch (err) {
      out.replaceChildren(errorBox(err));
    }
  });
  return h("section", { "aria-label": "Trades" }, h("h2", null, "Trades"), form, out);
}

async function readyBody(main: HTMLElement, p: Portfolio): Promise<void> {
  const holdings = h("section", { id: "holdings" }, "Loading holdings…");
  const rebalanced = h("section", { id: "rebalances" }, "Loading the rebalance history…");
  const analytics = h("section", { id: "analytics", "aria-label": "Performance" });
  const subj = { kind: "portfolio" as const, id: p.id };
  const picker = await benchmarkPicker("1", (b) => void renderAnalytics(analytics, subj, b));
  main.append(holdings, tradesSection(p.id), rebalanced, h("h2", null, "Performance and risk"), picker, analytics);
  await Promise.all([
    holdingsSection(holdings, p.id).catch((e) => holdings.replaceChildren(errorBox(e))),
    rebalanceSection(rebalanced, p.id).catch((e) => rebalanced.replaceChildren(errorBox(e))),
    renderAnalytics(analytics, subj, (picker.querySelector("select") as HTMLSelectElement).value),
  ]);
}

export async function portfolioPage(main: HTMLElement, id: string, isCurrent: () => boolean): Promise<void> {
  performance.mark("tearsheet-start");
  let p = await load(id);
  const head = h("div", null);
  const render = () => {
    head.replaceChildren(stateLine(p), h("div", { class: "scroll" }, history(p)));
    if (p.private)
      head.append(
        h(
          "details",
          null,
          h("summary", null, "Edit rules"),
          portfolioForm(p, () => void poll()),
        ),
      );
  };
  const body = h("div", null);
  main.replaceChildren(h("h1", { tabindex: "-1" }, p.name), h("p", null, p.description), head, body);
  render();
  const poll = async () => {
    p = { ...p, status: "PENDING" };
    render();
    body.replaceChildren();
    while (isCurrent()) {
      p = await load(id);
      if (p.status !== "PENDING") break;
      render();
      await new Promise((r) => setTimeout(r, 1000));
    }
    render();
    if (p.status === "READY" && isCurrent()) await readyBody(body, p);
    main.dataset.state = "ready";
  };
  if (p.status === "PENDING") await poll();
  else {
    if (p.status === "READY") await readyBody(body, p);
    main.dataset.state = "ready";
  }
}
