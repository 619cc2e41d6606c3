// The queue dashboard behind the `admin` scope, over a real socket and a real Redis: no key → 401
// asking for Basic credentials, a key without the scope → 403 naming it, an admin key (query or
// Basic password) → the dashboard and its API listing the pipeline queue with a job we added.

import { existsSync } from "node:fs";
import { Writable } from "node:stream";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { basicPassword } from "../../api/admin.ts";
import { type RunningServer, startServer } from "../../api/server.ts";
import { queueDashboard } from "../../jobs/host/dashboard.ts";
import { createLogger } from "../../jobs/logger.ts";
import { buildCatalog, KEYS } from "../api/fixture.ts";
import { fixtureWithMetrics } from "../api/helpers.ts";
import { noRedis } from "../redis.ts";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const REDIS = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const prefix = `test-dash-${process.pid}-${Date.now()}`;
let srv: RunningServer;
let dash: ReturnType<typeof queueDashboard>;

afterAll(async () => {
  await srv?.close();
  await dash?.queue.close();
  if (noRedis) return;
  const r = new Redis(REDIS);
  const keys = await r.keys(`${prefix}:*`);
  if (keys.length) await r.del(...keys);
  await r.quit();
});

const basic = (key: string) => ({ authorization: `Basic ${Buffer.from(`ops:${key}`).toString("base64")}` });

describe.skipIf(noRedis)("queue dashboard", () => {
  it("is served only to keys holding the admin scope", async () => {
    const fx = fixtureWithMetrics();
    const catalog = buildCatalog(fx);
    const quiet = createLogger("silent", new Writable({ write: (_c, _e, cb) => cb() }));
    dash = queueDashboard(REDIS, prefix);
    await dash.queue.add("run", { sourceDir: "/nowhere" }, { jobId: "run.dashboard-test.all" });
    srv = await startServer({
      port: 0,
      host: "127.0.0.1",
      deps: { snapshot: () => fx.snapshot, catalog, logger: quiet, accessLogger: quiet, admin: dash },
    });

    const none = await fetch(`${srv.url}/admin/queues`);
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toMatch(/^Basic realm="queue dashboard"/);

    const lacking = await fetch(`${srv.url}/admin/queues?api_key=${KEYS.aliceRatingsOnly}`);
    expect(lacking.status).toBe(403);
    expect((await lacking.json()).error.message).toMatch(/admin/);

    const page = await fetch(`${srv.url}/admin/queues`, { headers: basic(KEYS.alice) });
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/<html/i);

    const api = await fetch(`${srv.url}/admin/queues/api/queues?activeQueue=pipeline&status=waiting&page=1`, {
      headers: { api_key: KEYS.alice },
    });
    expect(api.status).toBe(200);
    const body = (await api.json()) as { queues: { name: string; jobs: { id: string }[] }[] };
    const q = body.queues.find((x) => x.name === "pipeline");
    expect(q?.jobs.map((j) => j.id)).toEqual(["run.dashboard-test.all"]);

    // The read API is untouched by the mount.
    const rest = await fetch(`${srv.url}/data/v1/benchmarks?api_key=${KEYS.alice}`);
    expect(rest.status).toBe(200);
  });

  it.skipIf(!existsSync(CHROMIUM))(
    "in a browser, the page loads nothing from other hosts and lists the queue",
    async () => {
      const { chromium } = await import("playwright-core");
      const browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: ["--headless", "--no-sandbox", "--disable-background-networking"],
      });
      try {
        const context = await browser.newContext({ httpCredentials: { username: "ops", password: KEYS.alice } });
        const page = await context.newPage();
        const outside: string[] = [];
        page.on("request", (r) => {
          const u = new URL(r.url());
          if ((u.protocol === "http:" || u.protocol === "https:") && u.hostname !== "127.0.0.1") outside.push(r.url());
        });
        const html = await page.goto(`${srv.url}/admin/queues`);
        expect(html?.status()).toBe(200);
        // The app has drawn the queue (its name) from the dashboard's own API.
        await page.getByText("pipeline").first().waitFor({ timeout: 30_000 });
        await page.waitForLoadState("networkidle");
        expect(outside).toEqual([]);
      } finally {
        await browser.close();
      }
    },
    90_000,
  );

  it("reads the key from a Basic password, whatever the user name", () => {
    expect(basicPassword(`Basic ${Buffer.from("anyone:k:with:colons").toString("base64")}`)).toBe("k:with:colons");
    expect(basicPassword(`Basic ${Buffer.from("nopassword").toString("base64")}`)).toBeUndefined();
    expect(basicPassword("Bearer abc")).toBeUndefined();
    expect(basicPassword(undefined)).toBeUndefined();
  });
});
