// "Watchlists & portfolios": the caller's watchlists and own portfolios, with their editors.
import { rest } from "../api.ts";
import { errorBox, h } from "../dom.ts";
import { portfolioForm } from "./portfolio-form.ts";
import { watchlistsSection } from "./watchlists.ts";

interface Portfolio {
  id: string;
  name: string;
  description: string;
  maxStocks: number;
  rebalanceFrequency: number;
}

export function portfolioList(list: Portfolio[], caption: string): HTMLElement {
  if (!list.length) return h("p", { class: "empty" }, "None yet.");
  return h(
    "ul",
    { class: "portfolios", "aria-label": caption },
    list.map((p) =>
      h(
        "li",
        null,
        h("a", { href: `#/portfolio/${p.id}` }, p.name),
        ` — ${p.description || "no description"} (at most ${p.maxStocks} stocks, every ${p.rebalanceFrequency} months)`,
      ),
    ),
  );
}

async function ownPortfolios(box: HTMLElement): Promise<void> {
  try {
    const list = await rest<Portfolio[]>("portfolios", { private: true });
    box.replaceChildren(
      h("h2", null, "My portfolios"),
      portfolioList(list, "My portfolios"),
      portfolioForm(null, (id) => {
        location.hash = `#/portfolio/${id}`;
      }),
    );
  } catch (e) {
    box.replaceChildren(h("h2", null, "My portfolios"), errorBox(e));
  }
}

export async function listsPage(main: HTMLElement): Promise<void> {
  const wl = h("section", { id: "watchlists" });
  const pf = h("section", { id: "my-portfolios" });
  main.replaceChildren(h("h1", { tabindex: "-1" }, "Watchlists and portfolios"), h("div", { class: "two" }, wl, pf));
  await Promise.all([watchlistsSection(wl), ownPortfolios(pf)]);
  main.dataset.state = "ready";
}

export async function predefinedPage(main: HTMLElement): Promise<void> {
  main.replaceChildren(h("h1", { tabindex: "-1" }, "Predefined portfolios"));
  try {
    main.append(portfolioList(await rest<Portfolio[]>("portfolios", { private: false }), "Predefined portfolios"));
  } catch (e) {
    main.append(errorBox(e));
  }
  main.dataset.state = "ready";
}
