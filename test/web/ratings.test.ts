// The Ratings page (#/ratings/H) in headless Chromium over the API test fixture with
// evidence-fixture.ts's rows: the summary table is the rating_evidence JSON, formatted; the horizon
// selector reads the other horizons; a rating without evaluated dates shows dashes and no quintile
// figure. Skips where /usr/bin/chromium is absent.
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RatingEvidence } from "../../pipeline/ratings/evidence.ts";
import { evidenceRows } from "../api/evidence-fixture.ts";
import { KEYS } from "../api/fixture.ts";
import { startTestServer, type TestServer } from "../api/helpers.ts";
import { CHROMIUM, go, launch, openPage, present, signIn, tableRows } from "./browser.ts";

if (!present) console.warn(`skipping the Ratings page browser test: no chromium at ${CHROMIUM}`);

const pct = (v: number, d: number) => `${(v * 100).toFixed(d)}%`;
const label = (r: string) =>
  r === "momentum_12_1_baseline" ? "Momentum 12-1 (baseline)" : r.charAt(0).toUpperCase() + r.slice(1, -7);

/** The summary row the page should show for `r` (the page's formats: 4 decimals for ICs, 2 for IR and t). */
const expectedRow = (r: RatingEvidence) => [
  label(r.rating),
  String(r.dates),
  ...(r.dates
    ? [
        r.meanIc!.toFixed(4),
        r.icStd!.toFixed(4),
        r.icir!.toFixed(2),
        r.tStat!.toFixed(2),
        pct(r.hitRate!, 0),
        ...r.quintileReturns.map((q) => pct(q, 2)),
      ]
    : Array(10).fill("–")),
];

describe.skipIf(!present)("the Ratings page", () => {
  let s: TestServer;
  let browser: Browser;
  beforeAll(async () => {
    s = await startTestServer();
    s.fx.snapshot.ratingEvidence = evidenceRows();
    browser = await launch();
  });
  afterAll(async () => {
    await browser?.close();
    await s?.close();
  });

  it("shows the API's evidence for each horizon, with its IC series and quintile figures", async () => {
    const { page, errors, urls } = await openPage(browser);
    await signIn(page, s.url, KEYS.alice);
    await go(page, "#/ratings");
    const api1 = (await s.api("rating_evidence")).json as RatingEvidence[];
    expect(await tableRows(page, "table.evidence")).toEqual(api1.map(expectedRow));
    // the IC series (uPlot) and one bar figure per rating with evaluated dates
    expect(await page.locator("#chart-ic canvas").count()).toBeGreaterThan(0);
    expect(await page.locator("figure.chart svg.bars").count()).toBe(8);
    await page.selectOption("#horizon", "12");
    await page.waitForFunction(() => location.hash === "#/ratings/12");
    await page.locator("main[data-state=ready] #horizon").waitFor();
    const api12 = (await s.api("rating_evidence", { horizon: 12 })).json as RatingEvidence[];
    await page.waitForFunction(() => document.querySelector("#chart-ic-title")?.textContent?.includes("12-month"));
    expect(await tableRows(page, "table.evidence")).toEqual(api12.map(expectedRow));
    expect(await page.locator("figure.chart svg.bars").count()).toBe(7);
    expect(errors).toEqual([]);
    expect(urls.filter((u) => u.includes(KEYS.alice))).toEqual([]);
    await page.close();
  }, 90_000);

  it("fits a 390 px wide screen", async () => {
    const { page, errors } = await openPage(browser, 390);
    await signIn(page, s.url, KEYS.alice);
    await go(page, "#/ratings/3");
    expect((await page.evaluate("document.documentElement.scrollWidth")) as number).toBeLessThanOrEqual(390);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);
});
