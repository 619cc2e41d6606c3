// Headless Chromium (Debian's /usr/bin/chromium, or CHROMIUM_PATH) through playwright-core, for the
// web app's tests and benchmark. `present` is false where there is no browser: the tests skip.
import { existsSync } from "node:fs";
import type { Browser, Page } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
export const present = existsSync(CHROMIUM);

export async function launch(): Promise<Browser> {
  const { chromium } = await import("playwright-core");
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-background-networking"],
  });
}

/** A page that records console errors, page errors and every request URL. */
export async function openPage(browser: Browser, width = 1280) {
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  const errors: string[] = [];
  const urls: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(`${m.text()} ${m.location().url}`);
  });
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("request", (r) => urls.push(r.url()));
  return { page, errors, urls };
}

/** Opens the app at `base`, enters the key, and waits for the first page (the screener). */
export async function signIn(page: Page, base: string, key: string): Promise<void> {
  await page.goto(`${base}/`);
  await page.locator("#api-key").fill(key);
  await page.locator("#key-form button[type=submit]").click();
  await page.locator("main[data-state=ready]").waitFor({ timeout: 30_000 });
}

/** Navigates inside the app (a hash route) and waits until the page says it is ready. */
export async function go(page: Page, hash: string, ready = "main[data-state=ready]"): Promise<void> {
  await page.evaluate((h) => {
    location.hash = h;
  }, hash);
  await page.locator(ready).waitFor({ timeout: 60_000 });
}

/** The text of every cell of `selector`'s body rows (header cells included), as the DOM holds it. */
export function tableRows(page: Page, selector: string): Promise<string[][]> {
  return page.$$eval(`${selector} tbody tr`, (trs) =>
    trs.map((tr) => [...tr.querySelectorAll("th, td")].map((c) => c.textContent ?? "")),
  );
}
