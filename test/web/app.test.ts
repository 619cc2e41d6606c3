// The web app (web/) in headless Chromium against a real server over the API test fixture: every
// page renders without a console error, the metric table is the API's JSON (shown, and downloaded
// as Arrow), and a watchlist edited in the app is what REST then returns. The app sends the key in
// a header only, never in a URL.
// Skips (saying why) where /usr/bin/chromium is absent; .ci/run installs it from Debian's packages.
import { readFileSync } from "node:fs";
import { tableFromIPC } from "apache-arrow";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEYS } from "../api/fixture.ts";
import { startTestServer, type TestServer } from "../api/helpers.ts";
import { CHROMIUM, go, launch, openPage, present, signIn, tableRows } from "./browser.ts";

if (!present) console.warn(`skipping the web app browser tests: no chromium at ${CHROMIUM} (apt-get install chromium)`);

describe.skipIf(!present)("web app in headless chromium", () => {
  let s: TestServer;
  let browser: Browser;
  beforeAll(async () => {
    s = await startTestServer();
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  it("serves the page with a CSP allowing no inline script", async () => {
    const r = await fetch(`${s.url}/`);
    expect(r.status).toBe(200);
    const csp = r.headers.get("content-security-policy") ?? "";
    const scriptSrc = csp.split(";").find((d) => d.startsWith("script-src "));
    expect(scriptSrc).toBe("script-src 'self'");
    expect(await r.text()).toContain('<script type="module" src="/web/app.js"></script>');
    expect((await fetch(`${s.url}/web/app.js`)).headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect((await fetch(`${s.url}/web/nope.js`)).status).toBe(404);
  });

  it("renders every page with no console error, and never puts the key in a URL", async () => {
    const { page, errors, urls } = await openPage(browser);
    const ticker = s.fx.snapshot.companies[0].ticker;
    await signIn(page, s.url, KEYS.alice);
    expect(await page.locator("table.screener tbody tr").count()).toBe(50);
    await go(page, `#/stock/${ticker}`, "#analytics[data-state=ready]");
    // the fixture's ratings are vendor ratings: the tearsheet says there are no components
    expect(await page.locator("#rating-components").textContent()).toContain("Vendor ratings");
    // the nine series figures and the rating history, each with its table alternative
    expect(await page.locator("figure.chart").count()).toBe(10);
    expect(await page.locator("figure.chart details.table-alt").count()).toBe(10);
    expect(await page.locator("figure.chart canvas").count()).toBeGreaterThanOrEqual(7);
    await page.locator("table.financials").first().waitFor();
    await go(page, "#/portfolio/101", "#analytics[data-state=ready]");
    expect(await page.locator("#portfolio-status").textContent()).toContain("READY");
    await go(page, "#/lists");
    await go(page, "#/portfolios");
    expect(errors).toEqual([]);
    expect(urls.filter((u) => u.includes(KEYS.alice))).toEqual([]);
    await page.close();
  }, 120_000);

  it("fits a 390 px wide screen: no page scrolls sideways (wide tables scroll in their own box)", async () => {
    const { page, errors } = await openPage(browser, 390);
    await signIn(page, s.url, KEYS.alice);
    const widths: Record<string, number> = {};
    for (const hash of ["#/", `#/stock/${s.fx.snapshot.companies[0].ticker}`, "#/portfolio/101", "#/lists"]) {
      await go(page, hash);
      widths[hash] = (await page.evaluate("document.documentElement.scrollWidth")) as number;
    }
    expect(
      Object.values(widths).every((w) => w <= 390),
      JSON.stringify(widths),
    ).toBe(true);
    expect(errors).toEqual([]);
    await page.close();
  }, 90_000);

  it("shows the stock's metric table exactly as the API's JSON", async () => {
    const { page, errors } = await openPage(browser);
    const ticker = s.fx.snapshot.companies[5].ticker;
    await signIn(page, s.url, KEYS.alice);
    await go(page, `#/stock/${ticker}`, "#analytics[data-state=ready]");
    const api = await s.api(`stock_metrics/${ticker}`, { benchmark: 1 });
    expect(api.status).toBe(200);
    const cols = Object.keys(api.json[0]).filter((k) => k !== "metric");
    expect(cols).toEqual([ticker, s.fx.snapshot.benchmarks[0].name]);
    const expected = (api.json as Record<string, string>[]).map((r) => [r.metric, ...cols.map((c) => r[c])]);
    const shown = await tableRows(page, "table.metrics");
    expect(shown.length).toBeGreaterThan(60);
    expect(shown).toEqual(expected);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it("the compare view: a column per stock in the metric table, nine charts; then portfolios", async () => {
    const { page, errors } = await openPage(browser);
    const [a, b, c] = s.fx.snapshot.companies.slice(1, 4).map((x) => x.ticker);
    await signIn(page, s.url, KEYS.alice);
    await go(page, `#/compare/stock/${a},${b},${c}`, "#analytics[data-state=ready]");
    const api = await s.api(`stock_metrics/${a}`, { benchmark: 1, compare: `${b},${c}` });
    expect(api.status).toBe(200);
    const cols = Object.keys(api.json[0]).filter((k) => k !== "metric");
    expect(cols).toEqual([a, s.fx.snapshot.benchmarks[0].name, b, c]);
    const shown = await tableRows(page, "table.metrics");
    expect(shown).toEqual((api.json as Record<string, string>[]).map((r) => [r.metric, ...cols.map((k) => r[k])]));
    expect(await page.locator("figure.chart").count()).toBe(9);
    // the form picks portfolios instead
    await page.selectOption("#compare-kind", "portfolio");
    await page.fill("#compare-ids", "101, 201");
    await page.getByRole("button", { name: "Compare", exact: true }).click();
    await page.waitForFunction(() => location.hash === "#/compare/portfolio/101,201");
    await page.locator("#analytics[data-state=ready]").waitFor();
    const papi = await s.api("portfolio_metrics/101", { benchmark: 1, compare: "201" }); // 201: alice's own
    expect(papi.status, papi.text.slice(0, 300)).toBe(200);
    const pcols = Object.keys(papi.json[0]).filter((k) => k !== "metric");
    expect(pcols).toEqual(["Portfolio", s.fx.snapshot.benchmarks[0].name, "Portfolio 201"]);
    expect(await tableRows(page, "table.metrics")).toEqual(
      (papi.json as Record<string, string>[]).map((r) => [r.metric, ...pcols.map((k) => r[k])]),
    );
    expect(errors).toEqual([]);
    await page.close();
  }, 90_000);

  it("downloads the metric table as Arrow (key in the header, a blob: URL) holding the API's JSON values", async () => {
    const { page, errors, urls } = await openPage(browser);
    const ticker = s.fx.snapshot.companies[7].ticker;
    await signIn(page, s.url, KEYS.alice);
    await go(page, `#/stock/${ticker}`, "#analytics[data-state=ready]");
    const [dl] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Metrics: download Arrow" }).click(),
    ]);
    expect(dl.suggestedFilename()).toBe(`${ticker}-metrics.arrow`);
    expect(dl.url()).toMatch(/^blob:/);
    const path = await dl.path();
    const t = tableFromIPC(readFileSync(path));
    const api = (await s.api(`stock_metrics/${ticker}`, { benchmark: 1 })).json as Record<string, string | null>[];
    const cols = Object.keys(api[0]).filter((k) => k !== "metric");
    // docs/api/bulk.md: per column its figure (float64; "12.5%" as 0.125, null where no number) and the text
    expect(t.schema.fields.map((f) => f.name)).toEqual(["metric", ...cols.flatMap((c) => [c, `${c}.display`])]);
    expect(t.numRows).toBe(api.length);
    const got = t.toArray().map((r) => r.toJSON() as Record<string, unknown>);
    const figure = (text: string | null) => {
      const m = /^(-?\d+(?:\.\d+)?)(%?)$/.exec((text ?? "").replace(/,/g, ""));
      return m ? Number(m[1]) / (m[2] ? 100 : 1) : null;
    };
    let numbers = 0;
    for (const [i, row] of api.entries()) {
      expect(got[i].metric).toBe(row.metric);
      for (const c of cols) {
        expect(got[i][`${c}.display`], `${row.metric} ${c}`).toBe(row[c]);
        const want = figure(row[c]);
        if (want === null) continue;
        numbers++;
        expect(got[i][c] as number, `${row.metric} ${c}`).toBeCloseTo(want, 12);
      }
    }
    expect(numbers).toBeGreaterThan(60);
    // the read went out with the key in its header only
    expect(urls.some((u) => u.includes(`stock_metrics/${ticker}?`) && u.includes("format=arrow"))).toBe(true);
    expect(urls.filter((u) => u.includes(KEYS.alice))).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it("sorts the screener by a rating, from the keyboard, as the API orders it", async () => {
    const { page, errors } = await openPage(browser);
    await signIn(page, s.url, KEYS.alice);
    // by keyboard: the column header's button takes focus and Enter sorts
    await page.getByRole("button", { name: /^Sort by Growth rating/ }).focus();
    await page.keyboard.press("Enter");
    const first = await s.api("stock_ratings", { order_by: "-growth_rating", limit: 3 });
    const tickers = first.json.map((r: { stock: { ticker: string } }) => r.stock.ticker);
    await expect
      .poll(async () => (await tableRows(page, "table.screener")).slice(0, 3).map((r) => r[0]))
      .toEqual(tickers);
    // focus stays on the header's button, now drawn anew
    await expect.poll(() => page.evaluate("document.activeElement.dataset.sort")).toBe("growth_rating");
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it("filters the screener by a rating range (the API's) and a sector (in the page)", async () => {
    const { page, errors } = await openPage(browser);
    await signIn(page, s.url, KEYS.alice);
    const sector = s.fx.snapshot.companies[0].sector;
    // the reference: the API's list for the range, every page, then the rows of that sector
    const all: { stock: { ticker: string; sector: string } }[] = [];
    for (let offset = 0; ; offset += 200) {
      const r = await s.api("stock_ratings", { ranges: '{"growth_rating":[6,10]}', limit: 200, offset });
      expect(r.status).toBe(200);
      all.push(...r.json);
      if (r.json.length < 200) break;
    }
    const expected = all.filter((r) => r.stock.sector === sector).map((r) => r.stock.ticker);
    expect(expected.length).toBeGreaterThan(0);
    await page.locator("#range-growth_rating-min").fill("6");
    await page.locator("#range-growth_rating-min").press("Tab");
    await page.locator("#sector").selectOption(sector);
    await expect.poll(() => page.locator("p.count").textContent()).toMatch(new RegExp(`^${expected.length} stocks`));
    const shown = (await tableRows(page, "table.screener")).map((r) => r[0]);
    expect(shown).toEqual(expected.slice(0, 50));
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  it("edits a watchlist through the GraphQL mutations; REST then returns the edit", async () => {
    const { page, errors } = await openPage(browser);
    const [a, b, c] = s.fx.snapshot.companies.slice(40, 43).map((x) => x.ticker);
    await signIn(page, s.url, KEYS.alice);
    await go(page, "#/lists", "#watchlists[data-state=ready]");
    const before = (await s.api("watchlists")).json.length;
    await page.locator("#wl-new-name").fill("From the web app");
    await page.locator("#wl-new-stockTickers").fill(`${a}, ${b}`);
    await page.getByRole("button", { name: "Create watchlist" }).click();
    const card = page.locator("section.watchlist", { hasText: "From the web app" });
    await card.waitFor();
    const id = await card.getAttribute("data-watchlist");
    await card.getByLabel("Add tickers").fill(`${c}`);
    await card.getByRole("button", { name: "Add", exact: true }).click();
    await page.locator("section.watchlist", { hasText: "(3 stocks)" }).waitFor();
    const card2 = page.locator(`section[data-watchlist="${id}"]`);
    await card2.getByRole("button", { name: `Remove ${a} from` }).click();
    await page.locator(`section[data-watchlist="${id}"]`, { hasText: "(2 stocks)" }).waitFor();
    await page
      .locator(`section[data-watchlist="${id}"]`)
      .getByLabel("Name", { exact: true })
      .fill("Renamed in the app");
    await page.locator(`section[data-watchlist="${id}"]`).getByRole("button", { name: "Rename" }).click();
    await page.locator(`section[data-watchlist="${id}"]`, { hasText: "Renamed in the app" }).waitFor();

    const lists = (await s.api("watchlists")).json as { id: string; name: string; stockCount: number }[];
    expect(lists.length).toBe(before + 1);
    expect(lists.find((w) => w.id === id)).toMatchObject({ name: "Renamed in the app", stockCount: 2 });
    const items = (await s.api(`watchlist_items/${id}`)).json as { stock: { ticker: string } }[];
    expect(items.map((i) => i.stock.ticker).sort()).toEqual([b, c].sort());

    // An unknown ticker: the mutation's error is shown beside the form, and nothing changes.
    const card3 = page.locator(`section[data-watchlist="${id}"]`);
    await card3.getByLabel("Add tickers").fill("NOPE9");
    await card3.getByRole("button", { name: "Add", exact: true }).click();
    await expect
      .poll(() => card3.locator(".field-error").allInnerTexts())
      .toContainEqual(expect.stringContaining("NOPE9"));
    expect(((await s.api(`watchlist_items/${id}`)).json as unknown[]).length).toBe(2);
    expect(errors).toEqual([]);
    await page.close();
  }, 90_000);
});
