// A portfolio created by a GraphQL mutation reaches READY through the job runner and its holdings
// are served by REST: real catalog file, real pipeline on the tiny source, real server, both the
// in-process runner and BullMQ workers on a real Redis (127.0.0.1:6379, as .ci/run guarantees).
import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import type { Worker } from "bullmq";
import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import { startServer } from "../../api/server.ts";
import { createLogger } from "../../jobs/logger.ts";
import { dispatchRun } from "../../jobs/queue/dispatch.ts";
import { inProcessRebalancer, queueRebalancer, type Rebalancer } from "../../jobs/queue/rebalance-requests.ts";
import { startPipelineWorker } from "../../jobs/worker/worker.ts";
import { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { SCOPES } from "../../pipeline/store/catalog/types.ts";
import { SnapshotHolder } from "../../pipeline/store/read/holder.ts";
import { readManifest, snapshotDir } from "../../pipeline/store/snapshot/snapshots.ts";
import { writeTinySource } from "../fixtures/tiny-source.ts";
import { noRedis } from "../redis.ts";

const REDIS = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const silent = { info: () => undefined, warn: () => undefined };
const prefixBase = `test-gqlrb-${process.pid}-${Date.now()}`;
const closers: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const c of closers.reverse()) await c();
  if (noRedis) return;
  const r = new Redis(REDIS);
  const keys = await r.keys(`${prefixBase}-*`);
  if (keys.length) await r.del(...keys);
  await r.quit();
});

/**
 * A published tiny snapshot, a server over it and a rebalancer of `mode` (the in-process runner or a BullMQ worker).
 */
async function setup(mode: "in-process" | "bullmq", name: string) {
  const dataDir = mkdtempSync(join(tmpdir(), `gql-rebalance-${mode}-${name}-`));
  const catalog = await Catalog.open(join(dataDir, "catalog.duckdb"));
  await dispatchRun({ dataDir, sourceDir: writeTinySource(), catalog, log: silent, redisUrl: null });
  const user = await catalog.createUser({
    email: "p@example.com",
    firstName: "P",
    lastName: "Q",
    phoneNumber: "+1 555 0000",
  });
  const { key } = await catalog.createKey(user.id, [...SCOPES]);
  const holder = SnapshotHolder.inMemory(dataDir);
  await holder.refresh();

  let rebalancer: Rebalancer;
  const workerLog: string[] = [];
  if (mode === "bullmq") {
    const prefix = `${prefixBase}-${mode}-${name}`;
    // What the worker says, kept: a test waiting in vain for a state prints it with its failure.
    const note = (o: unknown, m: string) =>
      void workerLog.push(`${new Date().toISOString()} ${m} ${JSON.stringify(o)}`);
    const worker: Worker = startPipelineWorker({
      redisUrl: REDIS,
      dataDir,
      catalog: await Catalog.open(join(dataDir, "catalog.duckdb")),
      log: { info: note, warn: note },
      prefix,
    });
    closers.push(() => worker.close());
    rebalancer = queueRebalancer(REDIS, catalog, silent, prefix);
  } else rebalancer = inProcessRebalancer({ dataDir, catalog, log: silent });
  closers.push(() => rebalancer.close());
  const logger = createLogger("silent", new Writable({ write: (_c, _e, cb) => cb() }));
  const srv = await startServer({
    port: 0,
    host: "127.0.0.1",
    deps: {
      snapshot: () => holder.get(),
      catalog,
      catalogWriter: catalog,
      requestRebalance: (id) => rebalancer.request(id),
      logger,
    },
  });
  closers.push(() => srv.close());

  const gql = async (query: string) => {
    const r = await fetch(`${srv.url}/graphiql`, {
      method: "POST",
      headers: { "content-type": "application/json", api_key: key },
      body: JSON.stringify({ query }),
    });
    return (await r.json()) as { data: Record<string, Record<string, unknown>>; errors?: unknown[] };
  };
  const rest = async (path: string) =>
    (await fetch(`${srv.url}/data/v1/${path}${path.includes("?") ? "&" : "?"}api_key=${key}`)).json();
  const status = async (id: string) =>
    ((await gql(`{ portfolio(id: "${id}") { status } }`)).data.portfolio as { status: string }).status;
  /** Waits until the runner has published and the server serves the new snapshot. */
  const settle = async (id: string) => {
    await rebalancer.idle();
    for (let i = 0; i < 300; i++) {
      await holder.refresh();
      if ((await status(id)) === "READY") return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`portfolio ${id} never became READY`);
  };
  const holdings = async (id: string) =>
    ((await rest(`portfolio_holdings/${id}`)) as { stock: { ticker: string } }[]).map((h) => h.stock.ticker);

  return { dataDir, catalog, holder, rebalancer, gql, rest, status, settle, holdings, workerLog };
}

for (const mode of ["in-process", "bullmq"] as const) {
  describe.skipIf(mode === "bullmq" && noRedis)(`portfolio mutations through the job runner (${mode})`, () => {
    it("PENDING after each change, READY once the snapshot serving it is published; REST serves holdings", async () => {
      const { holder, rebalancer, gql, rest, settle, holdings } = await setup(mode, "ready");
      // Tiny source ratings (test/fixtures/tiny-source.ts): total = 5,6,7,8 and return = 6,7,8,9 for AAA..DDD.
      // returnRating in [7, 10] keeps BBB, CCC, DDD; the two best by total rating: CCC (7) and DDD (8).
      const created = await gql(
        `mutation { createPortfolio(input: {name: "Two best", rebalanceFrequency: 1, maxStocks: 2, ranges: ` +
          `{returnRating: [7, 10]}}) { success errors { field messages } portfolio { id ` +
          `status rebalanceRequestedAt } } }`,
      );
      const p = created.data.createPortfolio.portfolio as { id: string; status: string; rebalanceRequestedAt: string };
      expect(created.data.createPortfolio.success).toBe(true);
      expect(p.status).toBe("PENDING");
      expect(await holdings(p.id)).toEqual([]);
      await settle(p.id);
      expect(await holdings(p.id)).toEqual(["CCC", "DDD"]);
      const restOne = (await rest(`portfolios/${p.id}`)) as { previousRebalanceDate: string; name: string };
      expect(restOne).toMatchObject({ name: "Two best", previousRebalanceDate: "2024-02-01" });

      // ascending by total rating: BBB (6), CCC (7)
      const updated = await gql(
        `mutation { updatePortfolio(input: {portfolioId: "${p.id}", maxStocksCriteriaOrder: "ascending"}) { ` +
          `success portfolio { status } } }`,
      );
      expect(updated.data.updatePortfolio).toEqual({ success: true, portfolio: { status: "PENDING" } });
      await settle(p.id);
      expect(await holdings(p.id)).toEqual(["BBB", "CCC"]);

      const deleted = await gql(`mutation { deletePortfolio(input: {portfolioId: "${p.id}"}) { success } }`);
      expect(deleted.data.deletePortfolio.success).toBe(true);
      await rebalancer.idle();
      for (let i = 0; i < 300 && holder.get()!.portfolios.has(p.id); i++) {
        await holder.refresh();
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(holder.get()!.portfolios.has(p.id)).toBe(false);
      expect(holder.get()!.portfolios.has("101")).toBe(true); // the predefined one is untouched
    }, 120_000);

    it("FAILED (with its time) when the rebalance fails for good; PENDING at the next change; then READY", async () => {
      const { dataDir, catalog, holder, gql, status, settle, holdings, workerLog } = await setup(mode, "failed");
      // The published snapshot's prices made unreadable: every rebalance on it fails (in BullMQ
      // after its 3 attempts). The file is swapped, not written in place: it may be hard-linked.
      const prices = join(snapshotDir(dataDir, readManifest(dataDir)!.snapshotId), "prices.parquet");
      renameSync(prices, `${prices}.good`);
      writeFileSync(prices, "not a parquet file");
      const created = await gql(
        `mutation { createPortfolio(input: {name: "Doomed", rebalanceFrequency: 1, maxStocks: 2, ranges: ` +
          `{returnRating: [7, 10]}}) { portfolio { id status rebalanceFailedAt } } }`,
      );
      const p = created.data.createPortfolio.portfolio as {
        id: string;
        status: string;
        rebalanceFailedAt: string | null;
      };
      expect(p).toMatchObject({ status: "PENDING", rebalanceFailedAt: null });
      const before = Date.now();
      let s = "PENDING";
      // In BullMQ: 3 attempts 5 s and 10 s apart, on timers a loaded machine stretches (a CI run
      // once needed over 60 s): up to 150 s.
      for (const until = Date.now() + 150_000; Date.now() < until && s === "PENDING"; ) {
        await new Promise((r) => setTimeout(r, 100));
        await catalog.refresh(); // a worker process writes the failure: the server polls the catalog (host/serve.ts)
        s = await status(p.id);
      }
      expect(s, `the worker's log:\n${workerLog.join("\n")}`).toBe("FAILED");
      const failed = (await gql(`{ portfolio(id: "${p.id}") { status rebalanceRequestedAt rebalanceFailedAt } }`)).data
        .portfolio as { rebalanceRequestedAt: string; rebalanceFailedAt: string };
      expect(Date.parse(failed.rebalanceFailedAt)).toBeGreaterThanOrEqual(Date.parse(failed.rebalanceRequestedAt));
      expect(Date.parse(failed.rebalanceFailedAt)).toBeGreaterThanOrEqual(before - 1000);
      expect(await holdings(p.id)).toEqual([]);

      // Repaired; the next change asks again: PENDING (the old failure was for the old change), then READY.
      rmSync(prices);
      renameSync(`${prices}.good`, prices);
      const updated = await gql(
        `mutation { updatePortfolio(input: {portfolioId: "${p.id}", maxStocksCriteriaOrder: "ascending"}) { ` +
          `portfolio { status rebalanceFailedAt } } }`,
      );
      expect(updated.data.updatePortfolio.portfolio).toEqual({ status: "PENDING", rebalanceFailedAt: null });
      await settle(p.id);
      expect(await holdings(p.id)).toEqual(["BBB", "CCC"]);
      await holder.refresh();
      expect(await status(p.id)).toBe("READY");
    }, 240_000);
  });
}
