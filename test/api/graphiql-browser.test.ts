// The GraphiQL IDE in a real browser: Debian's chromium driven by playwright-core opens
// /graphiql, which asks for a key (no request, no error before), loads the schema with it, runs the
// page's query with the key in the api_key header, and reads the result.
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
      const context = await browser.newContext();
      const page = await context.newPage();
      const outside: string[] = [];
      page.on("request", (r) => {
        if (!r.url().startsWith(s.url) && !r.url().startsWith("blob:") && !r.url().startsWith("data:"))
          outside.push(r.url());
      });
      let answer: import("playwright-core").Response | null = null;
      const posts: import("playwright-core").Response[] = [];
      page.on("response", (r) => {
        if (r.url() === `${s.url}/graphiql` && r.request().method() === "POST") posts.push(r);
        if (
          r.url() === `${s.url}/graphiql` &&
          r.request().method() === "POST" &&
          (r.request().postData() ?? "").includes("stockRatings")
        )
          answer = r;
      });
      await page.goto(`${s.url}/graphiql`);
      // Before a key is entered: the page asks for it, sends nothing, and shows no error.
      const keyInput = page.locator("#api-key");
      await keyInput.waitFor({ timeout: 30_000 });
      await page.waitForTimeout(1_500);
      expect(posts).toEqual([]);
      // biome-ignore lint/performance/useDomNodeTextContent: Playwright's Locator.innerText, the text as rendered
      const shown = () => page.locator("body").innerText();
      expect(await shown()).not.toMatch(/UNAUTHENTICATED|Error fetching schema/);
      await keyInput.fill(KEYS.alice);
      await page.locator("#api-key-form button[type=submit]").click();
      // Then the schema loads with the key: the introspection answer is the schema, not an error.
      await expect.poll(() => posts.length, { timeout: 30_000 }).toBeGreaterThan(0);
      const introspection = posts.find((r) => (r.request().postData() ?? "").includes("__schema"))!;
      expect((await introspection.request().allHeaders()).api_key).toBe(KEYS.alice);
      expect(introspection.status()).toBe(200);
      expect((await introspection.json()).data.__schema.queryType.name).toBe("Query");
      const run = page.locator(".graphiql-execute-button, button[aria-label^='Execute query']").first();
      await run.waitFor({ timeout: 30_000 });
      // The button can be drawn before the IDE has wired its editor (a click then runs nothing):
      // click again until the query is sent, as a user would.
      await expect
        .poll(
          async () => {
            if (answer !== null) return answer;
            await run.click();
            return null;
          },
          { timeout: 30_000, interval: 1_000 },
        )
        .not.toBeNull();
      const res = answer!;
      expect(res.status()).toBe(200);
      // the page's initial query: stockRatings(first: 5) with totalCount; the first ticker by -total_rating
      const top = (await s.api("stock_ratings", { limit: 1 })).json[0].stock.ticker;
      const total = s.fx.snapshot.ratingsByDate.get(s.fx.snapshot.ratingDates.at(-1)!)!.length;
      const result = page.locator(".result-window, .graphiql-response").first();
      // the editor renders non-breaking spaces
      // biome-ignore lint/performance/useDomNodeTextContent: Playwright's Locator.innerText, the text as rendered
      const text = async () => (await result.innerText()).replace(/[\s\u00a0]+/g, "");
      await expect.poll(text, { timeout: 20_000 }).toContain(`"totalCount":${total}`);
      expect(await text()).toContain(`"ticker":"${top}"`);
      expect(await shown()).not.toMatch(/UNAUTHENTICATED|Error fetching schema/);
      expect(outside).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 90_000);
});
