// No lost update, no deleted snapshot, one set of results: a rebalance published while a run
// computes is re-applied on the run's snapshot; runs and rebalances through the queue on two
// workers all land; the same backfill asked for twice (one after the other, or at once) is one job
// and one publish. Portfolios on the tiny source (total ratings AAA 5 < BBB 6 < CCC 7 < DDD 8):
// one stock by ascending total rating holds AAA, by descending holds DDD.
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Worker } from "bullmq";
import { afterAll, describe, expect, it } from "vitest";
import { catalogLookup, rebalanceOne } from "../../jobs/local/rebalance-run.ts";
import { runPipeline } from "../../jobs/local/runner.ts";
import { dispatchRebalance, dispatchRun } from "../../jobs/queue/dispatch.ts";
import { startPipelineWorker } from "../../jobs/worker/worker.ts";
import { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import type { UserPortfolio } from "../../pipeline/store/catalog/types.ts";
import { openDuck, scalar } from "../../pipeline/store/duck/duck.ts";
import { loadSnapshot } from "../../pipeline/store/read/load-snapshot.ts";
import { readManifest, snapshotDir } from "../../pipeline/store/snapshot/snapshots.ts";
import { tinyFiles, writeTinySource } from "../fixtures/tiny-source.ts";
import { userRules } from "../portfolios/universe-fixture.ts";
import { noRedis } from "../redis.ts";
import { cleanUpQueues, silent } from "./jobs-fixture.ts";

const REDIS = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const prefixBase = `test-races-${process.pid}-${Date.now()}`;
const workers: Worker[] = [];

afterAll(() => cleanUpQueues(prefixBase, workers));

const rules = (order: "ascending" | "descending") =>
  userRules({ name: "Mine", maxStocks: 1, maxStocksCriteriaOrder: order });

async function store() {
  const dataDir = mkdtempSync(join(tmpdir(), "races-"));
  const catalog = await Catalog.open(join(dataDir, "catalog.duckdb"));
  const user = await catalog.createUser({
    email: `u${Date.now()}@example.com`,
    firstName: "",
    lastName: "",
    phoneNumber: "",
  });
  return { dataDir, catalog, user };
}

async function holdings(dataDir: string, id: string): Promise<string[]> {
  return (await loadSnapshot(dataDir, readManifest(dataDir)!.snapshotId)).portfolios
    .get(id)!
    .holdings.map((h) => h.ticker);
}

describe("a rebalance racing a run", () => {
  it("is re-applied on the run's snapshot when the run read the portfolio before the change", async () => {
    const { dataDir, catalog, user } = await store();
    const p = await catalog.createUserPortfolio(user.id, rules("ascending"));
    await runPipeline({ dataDir, sourceDir: writeTinySource(), catalog, log: silent });
    expect(await holdings(dataDir, p.id)).toEqual(["AAA"]);
    // The run reads the user portfolios (still ascending); right then the user changes the
    // portfolio and its rebalance publishes, before the run does.
    let seen: UserPortfolio[] | null = null;
    const racing = new Proxy(catalog, {
      get(target, prop) {
        if (prop === "refresh")
          return async () => {
            const changed = await target.refresh();
            if (!seen) {
              seen = target.allUserPortfolios();
              const { id, ownerId: _o, createdAt: _c, ...old } = seen[0];
              await target.updateUserPortfolio(id, { ...old, id, maxStocksCriteriaOrder: "descending" });
              await rebalanceOne({ dataDir, log: silent, portfolioId: id, lookup: catalogLookup(target) });
            }
            return changed;
          };
        if (prop === "allUserPortfolios") return () => seen ?? target.allUserPortfolios();
        const v = Reflect.get(target, prop, target);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
    const y = await runPipeline({ dataDir, sourceDir: writeTinySource(), catalog: racing, log: silent });
    // The run's own snapshot was computed on the old definition…
    const own = await loadSnapshot(dataDir, y.meta.id);
    expect(own.portfolios.get(p.id)!.holdings.map((h) => h.ticker)).toEqual(["AAA"]);
    // …and the published one carries the change: re-applied after the run published.
    expect(await holdings(dataDir, p.id)).toEqual(["DDD"]);
    expect(
      readManifest(dataDir)!
        .log!.slice(0, 3)
        .map((e) => e.kind),
    ).toEqual(["rebalance", "run", "rebalance"]);
  }, 60_000);

  it.skipIf(noRedis)(
    "through the queue on two workers: a run and two rebalances at once all land, no " +
      "snapshot of the history is missing",
    async () => {
      const { dataDir, catalog, user } = await store();
      const prefix = `${prefixBase}-queue`;
      for (let i = 0; i < 2; i++)
        workers.push(
          startPipelineWorker({
            redisUrl: REDIS,
            dataDir,
            catalog: await Catalog.open(join(dataDir, "catalog.duckdb")),
            log: silent,
            prefix,
          }),
        );
      const p = await catalog.createUserPortfolio(user.id, rules("ascending"));
      const q = await catalog.createUserPortfolio(user.id, rules("ascending"));
      await runPipeline({ dataDir, sourceDir: writeTinySource(), catalog, log: silent });
      const versionBefore = readManifest(dataDir)!.version!;
      for (const x of [p, q]) await catalog.updateUserPortfolio(x.id, { ...rules("descending"), id: x.id });
      const common = { dataDir, catalog, log: silent, redisUrl: REDIS, prefix, timeoutMs: 60_000 };
      // A different source for the run (DDD's name changed), so it is a new run, not a repeat.
      const other = writeTinySource((f) => ({
        "companies.csv": f["companies.csv"].replace("Delta plc", "Delta Group plc"),
      }));
      const results = await Promise.all([
        dispatchRun({ ...common, sourceDir: other }),
        dispatchRebalance({ ...common, portfolioId: p.id }),
        dispatchRebalance({ ...common, portfolioId: q.id }),
      ]);
      const m = readManifest(dataDir)!;
      expect(m.version! - versionBefore).toBeGreaterThanOrEqual(3);
      for (const r of results) expect(m.log!.some((e) => e.snapshotId === r.snapshotId)).toBe(true);
      expect(await holdings(dataDir, p.id)).toEqual(["DDD"]);
      expect(await holdings(dataDir, q.id)).toEqual(["DDD"]);
      const snap = await loadSnapshot(dataDir, m.snapshotId);
      expect(snap.companies.find((c) => c.ticker === "DDD")!.name).toBe("Delta Group plc");
      for (const id of m.history) expect(existsSync(join(snapshotDir(dataDir, id), "meta.json"))).toBe(true);
    },
    90_000,
  );
});

describe("the same backfill twice", () => {
  const windowSource = () => {
    const lines = tinyFiles()["prices.csv"].split("\n");
    const rows = lines
      .filter((l) => /^2024-01-(08|09|10),/.test(l))
      .map((l) => l.replace(/,([\d.]+),1000,/, (_m, c) => `,${(Number(c) * 2).toFixed(2)},1000,`));
    return writeTinySource(() => ({
      "prices.csv": [lines[0], ...rows].join("\n"),
      "ratings.csv": null,
      "benchmarks.csv": null,
    }));
  };
  const priceRows = async (dataDir: string) => {
    const db = await openDuck();
    try {
      const f = { f: join(snapshotDir(dataDir, readManifest(dataDir)!.snapshotId), "prices.parquet") };
      return [
        Number(await scalar<bigint>(db.conn, "select count(*) from read_parquet($f)", f)),
        Number(await scalar<bigint>(db.conn, "select count(distinct (ticker, date)) from read_parquet($f)", f)),
      ];
    } finally {
      db.close();
    }
  };

  for (const mode of ["in-process", "bullmq"] as const) {
    it.skipIf(mode === "bullmq" && noRedis)(
      `gives one set of results (${mode}): one publish, no repeated rows`,
      async () => {
        const { dataDir, catalog } = await store();
        const prefix = `${prefixBase}-backfill-${mode}`;
        if (mode === "bullmq")
          workers.push(startPipelineWorker({ redisUrl: REDIS, dataDir, catalog, log: silent, prefix }));
        await runPipeline({ dataDir, sourceDir: writeTinySource(), catalog, log: silent });
        const src = windowSource();
        const ask = () =>
          dispatchRun({
            dataDir,
            sourceDir: src,
            catalog,
            log: silent,
            redisUrl: mode === "bullmq" ? REDIS : null,
            prefix,
            window: { from: "2024-01-08", to: "2024-01-10" },
            timeoutMs: 60_000,
          });
        const v0 = readManifest(dataDir)!.version!;
        // bullmq: two at once are one job; in-process: one after the other
        const [a, b] = mode === "bullmq" ? await Promise.all([ask(), ask()]) : [await ask(), await ask()];
        expect(b.snapshotId).toBe(a.snapshotId);
        const c = await ask();
        expect(c).toMatchObject({ snapshotId: a.snapshotId, skipped: true });
        expect(readManifest(dataDir)!.version).toBe(v0 + 1);
        // 4 tickers × 30 days; in the window only the source's rows (all four tickers there too).
        expect(await priceRows(dataDir)).toEqual([120, 120]);
        const snap = await loadSnapshot(dataDir, a.snapshotId);
        const r = snap.stockReturns.get("AAA")!;
        // AAA: day k closes 10 + 0.1k; Jan 8 (day 5) doubled = 21.00 over Jan 5 (day 4) 10.40.
        expect(r.returns[r.dates.indexOf("2024-01-08")]).toBeCloseTo(21.0 / 10.4 - 1, 12);
      },
      60_000,
    );
  }
});
