// The GraphiQL IDE in a real browser: Debian's chromium driven by playwright-core opens
// /graphiql, runs the page's query with the key in the api_key header, and reads the result.
// Skips (saying why) where /usr/bin/chromium is absent; .ci/run installs it from Debian's packages.
import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEYS } from "./fixture.ts";
import { startTestServer, type TestServer } from "./helpers.ts";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const present = existsSync(CHROMIUM);
if (!present) console.warn(`skipping the GraphiQL browser test: no chromium at ${CHROMIUM} (apt-get install chromium)`);

describe.skipIf(!present)("GraphiQL IDE in headless chromium", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer();
  });
  afterAll(() => s?.close());

  it("opens the IDE from local files, runs a query and shows the result", async () => {
    const { chromium } = await import("playwright-core");
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-background-networking"],
    });
    try {
      const context = await browser.newContext({ extraHTTPHeaders: { api_key: KEYS.alice } });
      const page = await context.newPage();
      const outside: string[] = [];
      page.on("request", (r) => {
        if (!r.url().startsWith(s.url) && !r.url().startsWith("blob:") && !r.url().startsWith("data:"))
          outside.push(r.url());
      });
      let answer: import("playwright-core").Response | null = null;
      page.on("response", (r) => {
        if (
          r.url() === `${s.url}/graphiql` &&
          r.request().method() === "POST" &&
          (r.request().postData() ?? "").includes("stockRatings")
        )
          answer = r;
      });
      await page.goto(`${s.url}/graphiql`);
      const run = page.locator(".graphiql-execute-button, button[aria-label^='Execute query']").first();
      await run.waitFor({ timeout: 30_000 });
      // The button can be drawn before the IDE has wired its editor (a click then runs nothing):
      // click again until the query is sent, as a user would.
      await expect
        .poll(async () => answer ?? (await run.click(), null), { timeout: 30_000, interval: 1_000 })
        .not.toBeNull();
      const res = answer!;
      expect(res.status()).toBe(200);
      // the page's initial query: stockRatings(first: 5) with totalCount; the first ticker by -total_rating
      const top = (await s.api("stock_ratings", { limit: 1 })).json[0].stock.ticker;
      const total = s.fx.snapshot.ratingsByDate.get(s.fx.snapshot.ratingDates.at(-1)!)!.length;
      const result = page.locator(".result-window, .graphiql-response").first();
      const text = async () => (await result.innerText()).replace(/[\s\u00a0]+/g, ""); // the editor renders non-breaking spaces
      await expect.poll(text, { timeout: 20_000 }).toContain(`"totalCount":${total}`);
      expect(await text()).toContain(`"ticker":"${top}"`);
      expect(outside).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 90_000);
});
