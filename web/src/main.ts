// The app's entry: asks for the API key once (kept in sessionStorage), then routes on the URL's
// hash: #/ (screener), #/stock/TICKER, #/portfolio/ID, #/ratings[/HORIZON], #/lists, #/portfolios,
// #/compare/KIND/IDS.
import "uplot/dist/uPlot.min.css";
import "./app.css";
import { ApiError, keyStore, rest, setOnUnauthorized } from "./api.ts";
import { errorBox, h } from "./dom.ts";
import { comparePage } from "./pages/compare.ts";
import { listsPage, predefinedPage } from "./pages/lists.ts";
import { portfolioPage } from "./pages/portfolio.ts";
import { ratingsPage } from "./pages/ratings.ts";
import { screenerPage } from "./pages/screener.ts";
import { stockPage } from "./pages/stock.ts";

const main = document.getElementById("main") as HTMLElement;
const forget = document.getElementById("forget-key") as HTMLButtonElement;
let generation = 0;

function keyForm(message?: string): void {
  const input = h("input", { id: "api-key", type: "password", autocomplete: "off", required: true });
  const err = h("p", { class: "error", role: "alert" }, message ?? "");
  const form: HTMLFormElement = h(
    "form",
    { id: "key-form", class: "card" },
    h("h1", { tabindex: "-1" }, "Your API key"),
    h("p", null, "The key is kept in this tab only (sessionStorage) and sent in the api_key header."),
    h("label", { for: "api-key" }, "API key"),
    input,
    h("button", { type: "submit" }, "Continue"),
    err,
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    keyStore.set(input.value.trim());
    try {
      await rest("benchmarks"); // any valid key may read it
      void route();
    } catch (x) {
      keyStore.clear();
      err.textContent = x instanceof ApiError && x.status === 401 ? "This key is not valid." : String(x);
    }
  });
  forget.hidden = true;
  main.replaceChildren(form);
  input.focus();
}

async function route(): Promise<void> {
  const gen = ++generation;
  if (!keyStore.get()) return keyForm();
  forget.hidden = false;
  delete main.dataset.state;
  const [, page, arg] = (location.hash.replace(/^#/, "") || "/").split("/");
  for (const a of document.querySelectorAll<HTMLAnchorElement>("nav a"))
    a.toggleAttribute("aria-current", a.getAttribute("href") === `#/${page ?? ""}`);
  try {
    const done =
      page === "stock" && arg
        ? stockPage(main, decodeURIComponent(arg))
        : page === "portfolio" && arg
          ? portfolioPage(main, decodeURIComponent(arg), () => gen === generation)
          : page === "ratings"
            ? ratingsPage(main, arg)
            : page === "lists"
              ? listsPage(main)
              : page === "portfolios"
                ? predefinedPage(main)
                : page === "compare"
                  ? comparePage(main, arg, location.hash.split("/")[3])
                  : screenerPage(main);
    main.querySelector<HTMLElement>("h1")?.focus();
    await done;
  } catch (e) {
    if (gen === generation) main.append(errorBox(e));
  }
}

setOnUnauthorized(() => {
  keyStore.clear();
  keyForm("The key was refused (401): enter it again.");
});
forget.addEventListener("click", () => {
  keyStore.clear();
  keyForm();
});
window.addEventListener("hashchange", () => void route());
void route();
