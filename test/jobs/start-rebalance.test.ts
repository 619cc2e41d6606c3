// `npm start` on a store whose catalog moved on after the last publish: the user portfolios the
// published snapshot holds no backtest of for their current rules (created after the run, or
// changed since) are found by a query over its portfolios table and rebalanced, exactly those,
// without the in-memory snapshot loader. Tiny source (total ratings AAA 5 < BBB 6 < CCC 7 < DDD 8).
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { rebalanceOne } from "../../jobs/local/rebalance-run.ts";
import { dispatchRun } from "../../jobs/queue/dispatch.ts";
import {
  inProcessRebalancer,
  portfoliosWithoutBacktest,
  type Rebalancer,
  requestAll,
} from "../../jobs/queue/rebalance-requests.ts";
import { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { openDuck, rows } from "../../pipeline/store/duck/duck.ts";
import { publishedSince, readManifest, snapshotDir } from "../../pipeline/store/snapshot/snapshots.ts";
import { writeTinySource } from "../fixtures/tiny-source.ts";
import { userRules } from "../portfolios/universe-fixture.ts";
import { silent, spawnTs, waitFor } from "./jobs-fixture.ts";

// The whole-snapshot loader must not run on the start-up path: calling it fails the test.
const loaderCalls = vi.hoisted(() => ({ n: 0 }));
vi.mock("../../pipeline/store/read/load-snapshot.ts", async (original) => ({
  ...(await original<typeof import("../../pipeline/store/read/load-snapshot.ts")>()),
  loadSnapshot: () => {
    loaderCalls.n++;
    throw new Error("loadSnapshot called on the start-up path");
  },
}));

const rules = (name: string, order: "ascending" | "descending") =>
  userRules({ name, maxStocks: 1, maxStocksCriteriaOrder: order });

/**
 * A published tiny store with four user portfolios: `kept` and `renamed` go into the run;
 * afterwards `renamed` is renamed (and its old rules published again), `late` is created and
 * `gone` (also in the run) is deleted.
 */
async function store() {
  const dataDir = mkdtempSync(join(tmpdir(), "start-rebalance-"));
  const catalog = await Catalog.open(join(dataDir, "catalog.duckdb"));
  const user = await catalog.createUser({ email: "s@example.com", firstName: "", lastName: "", phoneNumber: "" });
  const kept = await catalog.createUserPortfolio(user.id, rules("Kept", "descending"));
  const renamed = await catalog.createUserPortfolio(user.id, rules("Before", "descending"));
  const gone = await catalog.createUserPortfolio(user.id, rules("Gone", "ascending"));
  await dispatchRun({ dataDir, sourceDir: writeTinySource(), catalog, log: silent, redisUrl: null });
  const { ownerId: _o, createdAt: _c, ...r } = renamed;
  await catalog.updateUserPortfolio(renamed.id, { ...r, name: "After" });
  // Published after the change but with the rules from before it (as by a run that read the
  // catalog earlier): only the rules tell that this backtest is not the current one.
  await rebalanceOne({ dataDir, log: silent, portfolio: { rules: r, ownerId: renamed.ownerId, createdAt: null } });
  const late = await catalog.createUserPortfolio(user.id, rules("Late", "ascending"));
  await catalog.deleteUserPortfolio(gone.id);
  return { dataDir, catalog, ids: { kept: kept.id, renamed: renamed.id, late: late.id, gone: gone.id } };
}

/** The published portfolios table: id → [name, first holding]. */
async function published(dataDir: string) {
  const db = await openDuck();
  try {
    const dir = snapshotDir(dataDir, readManifest(dataDir)!.snapshotId);
    const r = await rows<{ id: string; name: string; ticker: string }>(
      db.conn,
      `select p.id, json_extract_string(p.rules, '$.name') as name, h.ticker
       from read_parquet($portfolios) p
       join read_parquet($holdings) h on h.portfolio_id = p.id and h.kind = 'today'
       where p.owner_id is not null order by p.id`,
      { portfolios: join(dir, "portfolios.parquet"), holdings: join(dir, "holdings.parquet") },
    );
    return Object.fromEntries(r.map((x) => [x.id, [x.name, x.ticker]]));
  } finally {
    db.close();
  }
}

const rebalanced = (dataDir: string, since: number) =>
  publishedSince(readManifest(dataDir), since)
    .filter((e) => e.kind === "rebalance")
    .map((e) => e.portfolio)
    .sort();

describe("start-up rebalances", () => {
  it("requests exactly the user portfolios without a backtest for their current rules", async () => {
    const { dataDir, catalog, ids } = await store();
    const m = readManifest(dataDir)!;
    const missing = await portfoliosWithoutBacktest(catalog, dataDir, m);
    expect(missing.sort()).toEqual([ids.late, ids.renamed].sort());

    const asked: string[] = [];
    const recorder: Rebalancer = {
      request: (id) => void asked.push(id),
      idle: async () => undefined,
      close: async () => undefined,
    };
    requestAll({ dataDir, catalog, log: silent }, missing, recorder);
    expect(asked.sort()).toEqual([ids.late, ids.renamed].sort());

    // Through the real in-process rebalancer: both are published, and then nothing is missing
    // (the stored rules compare equal to the catalog's).
    const rebalancer = inProcessRebalancer({ dataDir, catalog, log: silent });
    requestAll({ dataDir, catalog, log: silent }, missing, rebalancer);
    await rebalancer.idle();
    expect(rebalanced(dataDir, m.version ?? 0)).toEqual([ids.late, ids.renamed].sort());
    expect(await portfoliosWithoutBacktest(catalog, dataDir, readManifest(dataDir)!)).toEqual([]);
    // `gone` is still in the snapshot (no one asked to drop it); `late` holds AAA (ascending), the others DDD
    expect(await published(dataDir)).toEqual({
      [ids.kept]: ["Kept", "DDD"],
      [ids.renamed]: ["After", "DDD"],
      [ids.gone]: ["Gone", "AAA"],
      [ids.late]: ["Late", "AAA"],
    });
    expect(loaderCalls.n).toBe(0);
  }, 60_000);

  it("npm start rebalances them after its banner, without Redis", async () => {
    const { dataDir, catalog, ids } = await store();
    await catalog.idle();
    const since = readManifest(dataDir)!.version ?? 0;
    const p = spawnTs("jobs/host/start.ts", [], {
      DATA_DIR: dataDir,
      PORT: "0",
      REDIS_URL: "",
      LOG_LEVEL: "info",
      LOG_FORMAT: "json",
      DEMO_API_KEY: "start-rebalance-demo-key",
      WEB_CONCURRENCY: "1",
    });
    try {
      await waitFor("the banner", () => p.out.some((l) => /serving http/.test(l)), 90_000);
      // the demo user's portfolio (created at this start, after the run) is missing too
      const demo = (await Catalog.open(join(dataDir, "catalog.duckdb")))
        .allUserPortfolios()
        .filter((u) => !Object.values(ids).includes(u.id))
        .map((u) => u.id);
      expect(demo).toHaveLength(1);
      const want = [ids.late, ids.renamed, ...demo].sort();
      await waitFor("the rebalances", () => rebalanced(dataDir, since).length >= want.length, 90_000);
      expect(rebalanced(dataDir, since)).toEqual(want);
      const said = [...p.out, ...p.err]
        .filter((l) => l.includes("without a backtest"))
        .map((l) => (JSON.parse(l) as { portfolios: string[] }).portfolios.sort());
      expect(said).toEqual([want]);
    } finally {
      p.child.kill("SIGTERM");
      await p.exited;
    }
  }, 180_000);
});
