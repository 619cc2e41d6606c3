// A portfolio created in the web app reaches READY and shows its holdings and rebalance history: a
// real catalog file, the real pipeline on the tiny source (test/fixtures/tiny-source.ts), the
// in-process rebalancer and a real server; the app polls the portfolio's state until the rebalanced
// snapshot is served.
// Skips (saying why) where /usr/bin/chromium is absent.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningServer, startServer } from "../../api/server.ts";
import { createLogger } from "../../jobs/logger.ts";
import { dispatchRun } from "../../jobs/queue/dispatch.ts";
import { inProcessRebalancer, type Rebalancer } from "../../jobs/queue/rebalance-requests.ts";
import { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { SCOPES } from "../../pipeline/store/catalog/types.ts";
import { openDuck, rows } from "../../pipeline/store/duck/duck.ts";
import { SnapshotHolder } from "../../pipeline/store/read/holder.ts";
import { snapshotDir } from "../../pipeline/store/snapshot/snapshots.ts";
import { writeTinySource } from "../fixtures/tiny-source.ts";
import { CHROMIUM, go, launch, openPage, present, signIn, tableRows } from "./browser.ts";

if (!present) console.warn(`skipping the web portfolio test: no chromium at ${CHROMIUM} (apt-get install chromium)`);
const silent = { info: () => undefined, warn: () => undefined };

describe.skipIf(!present)("a portfolio created in the web app", () => {
  let dataDir: string;
  let srv: RunningServer;
  let rebalancer: Rebalancer;
  let key: string;
  let timer: NodeJS.Timeout;
  let holder: SnapshotHolder;
  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), "web-portfolio-"));
    const catalog = await Catalog.open(join(dataDir, "catalog.duckdb"));
    await dispatchRun({ dataDir, sourceDir: writeTinySource(), catalog, log: silent, redisUrl: null });
    const user = await catalog.createUser({ email: "w@example.com", firstName: "W", lastName: "A", phoneNumber: "1" });
    key = (await catalog.createKey(user.id, [...SCOPES])).key;
    holder = SnapshotHolder.inMemory(dataDir);
    await holder.refresh();
    // the server's own process follows new snapshots the same way (a refresh on a short period)
    timer = setInterval(() => void holder.refresh().catch(() => {}), 200);
    rebalancer = inProcessRebalancer({ dataDir, catalog, log: silent });
    srv = await startServer({
      port: 0,
      host: "127.0.0.1",
      deps: {
        snapshot: () => holder.get(),
        catalog,
        catalogWriter: catalog,
        requestRebalance: (id) => rebalancer.request(id),
        logger: createLogger("silent", new Writable({ write: (_c, _e, cb) => cb() })),
      },
    });
  }, 180_000);
  afterAll(async () => {
    clearInterval(timer);
    await srv?.close();
    await rebalancer?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("shows field errors, then PENDING, then READY with the selected holdings", async () => {
    const browser = await launch();
    try {
      const { page, errors } = await openPage(browser);
      await signIn(page, srv.url, key);
      await go(page, "#/lists", "#my-portfolios form");
      const form = page.locator("#pf-new");
      await form.getByLabel("Name", { exact: true }).fill("Two best");
      await form.getByLabel("Maximum stocks").fill("0");
      await form.getByRole("button", { name: "Create portfolio" }).click();
      // the mutation's field error, next to its field; nothing is written
      await expect.poll(() => form.locator('[data-error-for="maxStocks"]').textContent()).not.toBe("");
      const own = async () =>
        (await (await fetch(`${srv.url}/data/v1/portfolios`, { headers: { api_key: key } })).json()) as unknown[];
      expect(await own()).toEqual([]);

      // Tiny source ratings: total = 5,6,7,8 and return = 6,7,8,9 for AAA..DDD; returnRating in
      // [7, 10] keeps BBB, CCC, DDD; the two best by total rating are CCC and DDD.
      // every state the page shows, in order (the page is one document: the observer stays)
      await page.evaluate(() => {
        const seen: string[] = [];
        (window as unknown as { seen: string[] }).seen = seen;
        new MutationObserver(() => {
          const t = document.getElementById("portfolio-status")?.textContent?.match(/State: (\w+)/)?.[1];
          if (t && seen.at(-1) !== t) seen.push(t);
        }).observe(document.body, { childList: true, subtree: true, characterData: true });
      });
      await form.getByLabel("Maximum stocks").fill("2");
      await form.getByLabel("Return rating at least").fill("7");
      await form.getByLabel("Return rating at most").fill("10");
      await form.getByRole("button", { name: "Create portfolio" }).click();
      await page.waitForURL(/#\/portfolio\/\d+$/);
      await page.locator("#portfolio-status", { hasText: "READY" }).waitFor({ timeout: 120_000 });
      await page.locator("main[data-state=ready]").waitFor({ timeout: 60_000 });
      const holdings = (await tableRows(page, "table.holdings")).map((r) => r[0]);
      expect(holdings).toEqual(["CCC", "DDD"]);
      // the rebalance history: one row per rebalance date of the served snapshot's holdings table
      // (read here by DuckDB), newest first; the same two stocks throughout (the tiny source's
      // ratings do not change order), so only the first rebalance adds them
      const pid = page.url().match(/(\d+)$/)![1];
      const db = await openDuck();
      const dates = (
        await rows<{ d: string; n: number }>(
          db.conn,
          "select strftime(date, '%Y-%m-%d') as d, count(*)::integer as n from read_parquet($1) " +
            "where portfolio_id = $2 and kind = 'rebalance' group by date order by date desc",
          [join(snapshotDir(dataDir, holder.get()!.id), "holdings.parquet"), pid],
        )
      ).map((r) => [r.d, String(r.n)]);
      db.close();
      expect(dates.length).toBeGreaterThan(1);
      const shown = await tableRows(page, "table.rebalances");
      expect(shown.map((r) => r.slice(0, 2))).toEqual(dates);
      expect(shown.map((r) => r.slice(2))).toEqual(
        dates.map((_, i) => (i === dates.length - 1 ? ["CCC, DDD", "–"] : ["–", "–"])),
      );
      expect(await page.evaluate(() => (window as unknown as { seen: string[] }).seen)).toEqual(["PENDING", "READY"]);
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 240_000);
});
