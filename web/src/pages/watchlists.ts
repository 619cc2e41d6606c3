// The caller's watchlists: create, rename, delete, add and remove stocks, all through the GraphQL
// mutations; each list's stocks are read back from REST (watchlist_items).
import { gql, rest } from "../api.ts";
import { errorBox, h } from "../dom.ts";
import { errorSlot, field, type Payload, submit } from "../forms.ts";

interface Watchlist {
  id: string;
  name: string;
  description: string;
  stockCount: number;
}
interface Item {
  stock: { ticker: string; name: string };
  totalRating: string | null;
}

const PAYLOAD = "success errors { field messages } watchlist { id name stockCount }";
const M = {
  create: `mutation($i: CreateWatchlistInput!) { r: createWatchlist(input: $i) { ${PAYLOAD} } }`,
  update: `mutation($i: UpdateWatchlistInput!) { r: updateWatchlist(input: $i) { ${PAYLOAD} } }`,
  remove: `mutation($i: DeleteWatchlistInput!) { r: deleteWatchlist(input: $i) { success errors { field messages } } }`,
  add: `mutation($i: AddToWatchlistInput!) { r: addToWatchlist(input: $i) { ${PAYLOAD} } }`,
  drop: `mutation($i: RemoveFromWatchlistInput!) { r: removeFromWatchlist(input: $i) { ${PAYLOAD} } }`,
};
const run = (m: string, i: Record<string, unknown>) => async () => (await gql<{ r: Payload }>(m, { i })).r;
const tickers = (s: string) =>
  s
    .split(/[\s,]+/)
    .map((t) => t.trim().toUpperCase())
    .filter(Boolean);
const val = (form: HTMLElement, name: string) =>
  (form.querySelector(`[name="${name}"]`) as HTMLInputElement | null)?.value ?? "";

function createForm(reload: () => void): HTMLElement {
  const form: HTMLFormElement = h(
    "form",
    { class: "card", id: "new-watchlist", "aria-label": "New watchlist" },
    h("h3", null, "New watchlist"),
    field("Name", "name", { idPrefix: "wl-new", required: true }),
    field("Description", "description", { idPrefix: "wl-new" }),
    field("Tickers (comma-separated)", "stockTickers", { idPrefix: "wl-new" }),
    errorSlot("input"),
    h("button", { type: "submit" }, "Create watchlist"),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const i = {
      name: val(form, "name"),
      description: val(form, "description"),
      stockTickers: tickers(val(form, "stockTickers")),
    };
    void submit(form, run(M.create, i), reload);
  });
  return form;
}

async function itemsTable(w: Watchlist, reload: () => void): Promise<HTMLElement> {
  const items = await rest<Item[]>(`watchlist_items/${w.id}`, { limit: 200 });
  if (!items.length) return h("p", { class: "empty" }, "No stocks yet.");
  const form = h("div", null);
  const rows = items.map((it) =>
    h(
      "li",
      null,
      h("a", { href: `#/stock/${encodeURIComponent(it.stock.ticker)}` }, it.stock.ticker),
      ` ${it.stock.name} · total ${it.totalRating ?? "–"} `,
      h(
        "button",
        {
          type: "button",
          "aria-label": `Remove ${it.stock.ticker} from ${w.name}`,
          onclick: () => void submit(form, run(M.drop, { watchlistId: w.id, stockTickers: [it.stock.ticker] }), reload),
        },
        "Remove",
      ),
    ),
  );
  form.append(h("ul", { class: "items" }, rows), errorSlot("input"));
  return form;
}

function watchlistCard(w: Watchlist, reload: () => void): HTMLElement {
  const p = `wl-${w.id}`;
  const rename: HTMLFormElement = h(
    "form",
    { class: "inline", "aria-label": `Rename ${w.name}` },
    field("Name", "name", { idPrefix: p, value: w.name, required: true }),
    h("button", { type: "submit" }, "Rename"),
    errorSlot("input"),
  );
  rename.addEventListener("submit", (e) => {
    e.preventDefault();
    void submit(rename, run(M.update, { watchlistId: w.id, name: val(rename, "name") }), reload);
  });
  const add: HTMLFormElement = h(
    "form",
    { class: "inline", "aria-label": `Add stocks to ${w.name}` },
    field("Add tickers", "stockTickers", { idPrefix: `${p}-add` }),
    h("button", { type: "submit" }, "Add"),
    errorSlot("input"),
  );
  add.addEventListener("submit", (e) => {
    e.preventDefault();
    void submit(add, run(M.add, { watchlistId: w.id, stockTickers: tickers(val(add, "stockTickers")) }), reload);
  });
  const del = h("div", { class: "inline" }, errorSlot("input"));
  del.prepend(
    h(
      "button",
      {
        type: "button",
        class: "danger",
        onclick: () => {
          if (confirm(`Delete watchlist ${w.name}?`)) void submit(del, run(M.remove, { watchlistId: w.id }), reload);
        },
      },
      "Delete watchlist",
    ),
  );
  const items = h("div", null, "Loading…");
  itemsTable(w, reload).then(
    (t) => items.replaceChildren(t),
    (e) => items.replaceChildren(errorBox(e)),
  );
  return h(
    "section",
    { class: "card watchlist", "data-watchlist": w.id, "aria-label": `Watchlist ${w.name}` },
    h("h3", null, `${w.name} (${w.stockCount} stocks)`),
    rename,
    add,
    items,
    del,
  );
}

export async function watchlistsSection(box: HTMLElement): Promise<void> {
  const reload = () => void watchlistsSection(box);
  try {
    const lists = await rest<Watchlist[]>("watchlists");
    box.replaceChildren(h("h2", null, "Watchlists"), createForm(reload), ...lists.map((w) => watchlistCard(w, reload)));
  } catch (e) {
    box.replaceChildren(h("h2", null, "Watchlists"), errorBox(e));
  }
  box.dataset.state = "ready";
}
