// The server the fuzz suite attacks, in its own process (so its RSS and event loop are its own):
// a generated source published into a new store by a real pipeline run, the demo user (every
// scope, one portfolio, one watchlist) in the real DuckDB catalog, then jobs/host/serve.ts as
// `npm start` wires it (lazy DuckDB reader, catalog polling, rate limits). Reports
// {url, key, pid} over IPC; exits on "close".
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateSample } from "../../data/generate.ts";
import { loadConfig } from "../../jobs/config.ts";
import { serve } from "../../jobs/host/serve.ts";
import { runPipeline } from "../../jobs/local/runner.ts";
import { createLogger } from "../../jobs/logger.ts";
import { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { ensureDemoUser, ensureDemoWatchlist } from "../../pipeline/store/catalog/demo.ts";
import { loadSnapshot } from "../../pipeline/store/read/load-snapshot.ts";

const KEY = "fuzz-demo-key-0123456789abcdef";
const root = mkdtempSync(join(tmpdir(), "fuzz-store-"));
const sourceDir = join(root, "source");
const dataDir = join(root, "data");
await generateSample(sourceDir, { companies: 20, years: 2, seed: 27 });
const catalog = await Catalog.open(join(dataDir, "catalog.duckdb"));
const demo = await ensureDemoUser(catalog, KEY); // before the run, so the run backtests its portfolio
const quiet = { info: () => undefined, warn: () => undefined };
const { meta } = await runPipeline({ dataDir, sourceDir, catalog, log: quiet, workers: 0 });
await ensureDemoWatchlist(catalog, demo.user.id, (await loadSnapshot(dataDir, meta.id)).companies);

// No REDIS_URL: rate limits and the GraphQL cost budget count in process (set high enough for the fuzz
// run), rebalances in process.
const config = loadConfig({
  PORT: "0",
  DATA_DIR: dataDir,
  LOG_LEVEL: process.env.FUZZ_SERVER_LOG ?? "silent",
  RATE_LIMIT_PER_MINUTE: "100000000",
  GRAPHQL_COST_PER_MINUTE: "1000000000",
});
const srv = await serve(config, createLogger(config.logLevel), async () => catalog);
process.send?.({ url: srv.url, key: KEY, pid: process.pid });
process.on("message", async (m) => {
  if (m !== "close") return;
  await srv.close();
  await catalog.idle();
  rmSync(root, { recursive: true, force: true });
  process.exit(0);
});
