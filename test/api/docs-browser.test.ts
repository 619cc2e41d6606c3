// /docs in a real headless Chromium: Redoc renders every endpoint from /data/v1/openapi.json, with
// every request going to this server (offline) and no console errors (the CSP lets it run).
// Skipped where /usr/bin/chromium is absent (apt-get install chromium).
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "./helpers.ts";

const CHROMIUM = "/usr/bin/chromium";
const have = existsSync(CHROMIUM);

describe.skipIf(!have)("/docs in headless Chromium", () => {
  let s: TestServer;
  let browser: Browser;
  beforeAll(async () => {
    s = await startTestServer();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-background-networking"],
    });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  it("renders the API reference from this server only", async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const origin = new URL(s.url).origin;
    const elsewhere: string[] = [];
    const errors: string[] = [];
    // offline: anything not on this server is recorded and refused
    await page.route("**/*", (route) => {
      const url = route.request().url();
      if (url.startsWith(origin) || url.startsWith("blob:") || url.startsWith("data:")) return route.continue();
      elsewhere.push(url);
      return route.abort();
    });
    page.on("console", (m) => m.type() === "error" && errors.push(m.text()));
    page.on("pageerror", (e) => errors.push(String(e)));
    const res = await page.goto(`${s.url}/docs`);
    expect(res?.status()).toBe(200);
    await page
      .getByRole("heading", { name: /Stock ratings and portfolio data service/ })
      .first()
      .waitFor({ timeout: 30_000 });
    // one menu entry per endpoint summary (the sidebar lists every operation)
    await page.getByText("stock_ratings", { exact: false }).first().waitFor();
    // biome-ignore lint/performance/useDomNodeTextContent: Playwright's Locator.innerText, the text as rendered
    const text = await page.locator("body").innerText();
    for (const tag of [
      "stock_ratings",
      "stock_financials",
      "stock_metrics",
      "stock_performance",
      "portfolios",
      "portfolio_holdings",
      "portfolio_trades",
      "watchlists",
      "benchmarks",
    ]) {
      expect(text, tag).toContain(tag);
    }
    const shot = join(tmpdir(), "docs-redoc.png");
    await page.screenshot({ path: shot });
    expect(existsSync(shot)).toBe(true);
    expect(elsewhere).toEqual([]);
    // Redoc's sidebar asks cdn.redoc.ly for its logo; the CSP (img-src 'self' data:) refuses it
    // and Redoc hides the image. That refusal is the only console error allowed.
    expect(
      errors.filter((e) => !/Loading the image 'https:\/\/cdn\.redoc\.ly\/redoc\/logo-mini\.svg' violates/.test(e)),
    ).toEqual([]);
    await page.close();
  }, 90_000);
});
