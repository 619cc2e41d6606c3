// The export cache across a server's swap, through the server's own wiring (jobs/host/serve.ts
// makeAppDeps: the snapshot holder polling the manifest each second): at start and after each swap
// the warm-up builds the served snapshot's Arrow files, and the swap drops the previous snapshot's.
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { loadConfig } from "../../jobs/config.ts";
import { makeAppDeps } from "../../jobs/host/serve.ts";
import { createLogger } from "../../jobs/logger.ts";
import { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { exportCacheDir, exportCacheFile } from "../../pipeline/store/snapshot/staging-layout.ts";
import { generatedStore } from "../store/published.ts";

const closers: (() => unknown)[] = [];
afterAll(async () => {
  for (const c of closers.reverse()) await c();
});

/** `check` every 50 ms (bounded: 30 s) until it holds. */
async function eventually(check: () => boolean): Promise<boolean> {
  for (let i = 0; i < 600 && !check(); i++) await new Promise((r) => setTimeout(r, 50));
  return check();
}

it("a swap drops the old snapshot's export files; the new one's are built in the background", async () => {
  const store = await generatedStore({ companies: 20, years: 2, seed: 3 });
  const first = await store.run();
  const catalog = await Catalog.open(join(mkdtempSync(join(tmpdir(), "export-swap-")), "catalog.duckdb"));
  const config = loadConfig({ DATA_DIR: store.dataDir, WEBHOOKS: "0", LOG_LEVEL: "silent" });
  const { closers: stop } = await makeAppDeps(config, createLogger("silent"), catalog);
  closers.push(() => catalog.close());
  for (const c of stop) closers.push(() => c.close());
  const file = (id: string, name: string) => exportCacheFile(store.dataDir, id, name);
  // at start: the served snapshot's warm-up
  expect(await eventually(() => existsSync(file(first, "stock_returns.arrow")))).toBe(true);
  expect(existsSync(file(first, "stock_metrics.arrow"))).toBe(true);
  const second = await store.run();
  expect(second).not.toBe(first);
  // the holder swaps within a second or two: the first snapshot's folder goes, the second's files come
  expect(await eventually(() => !existsSync(join(exportCacheDir(store.dataDir), first)))).toBe(true);
  expect(await eventually(() => existsSync(file(second, "stock_returns.arrow")))).toBe(true);
}, 180_000);
