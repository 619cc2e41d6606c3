// Stage: recompute one portfolio against the published snapshot and publish the result as a new
// snapshot. Every other table is hard-linked from the current snapshot, so a user's change
// costs one backtest, not a pipeline run.
import { existsSync } from "node:fs";
import { linkTree } from "../store/link.ts";
import { join } from "node:path";
import { buildUniverse } from "../portfolios/index.ts";
import { lit, openDuck } from "../store/duck.ts";
import { loadSnapshotBenchmarks } from "../store/load-snapshot.ts";
import { newSnapshotId, publishSnapshot, readManifest, readMeta, snapshotDir, stagingDir, discardStaging, type SnapshotMeta } from "../store/snapshots.ts";
import { METRIC_COLS, METRIC_ORDER } from "../store/metric-tables.ts";
import { subjectMetricRows } from "./metrics-partition.ts";
import { loadCompanies, loadPanel, loadRatings } from "./frames.ts";
import { exportPortfolioTables, runBacktests, stagePortfolioTables } from "./portfolios.ts";
import { appendTable, exportParquet } from "../store/write.ts";
import type { PortfolioRules } from "../types.ts";
import type { Log } from "./context.ts";

const REWRITTEN = new Set(["portfolios.parquet", "holdings.parquet", "portfolio_returns.parquet", "portfolio_metrics.parquet", "meta.json"]);

/**
 * Recomputes `portfolio` (or drops portfolio `dropId`) on top of the current snapshot.
 * Returns the new snapshot's meta.
 */
export interface PortfolioSpec {
  rules: PortfolioRules;
  ownerId: string | null;
  createdAt: string | null;
}

export async function rebalanceOne(opts: { dataDir: string; log: Log; portfolio: PortfolioSpec | null; dropId?: string }): Promise<SnapshotMeta> {
  const m = readManifest(opts.dataDir);
  if (!m) throw new Error("no snapshot is published yet: run the pipeline first");
  const from = snapshotDir(opts.dataDir, m.snapshotId);
  const id = newSnapshotId();
  const out = stagingDir(opts.dataDir, id);
  const db = await openDuck();
  const conn = db.conn;
  const pq = (t: string) => `read_parquet(${lit(join(from, `${t}.parquet`))})`;
  try {
    const t0 = performance.now();
    linkTree(from, out, (f) => REWRITTEN.has(f));
    for (const t of ["companies", "prices", "ratings"]) await conn.run(`create view ${t} as select * from ${pq(t)}`);
    const universe = buildUniverse(await loadPanel(conn), await loadCompanies(conn), await loadRatings(conn));
    const benchmarks = await loadSnapshotBenchmarks(conn, from);
    const pid = opts.portfolio?.rules.id ?? opts.dropId!;
    // Old rows of every other portfolio (dates as text, like freshly staged rows), then this one's.
    const text = (cols: string[]) => `* replace (${cols.map((c) => `cast(${c} as varchar) as ${c}`).join(", ")})`;
    await conn.run(`create table portfolios as select ${text(["previous_rebalance_date", "next_rebalance_date", "today_date"])} from ${pq("portfolios")} where id <> ${lit(pid)}`);
    await conn.run(`create table holdings as select ${text(["date"])} from ${pq("holdings")} where portfolio_id <> ${lit(pid)}`);
    await conn.run(`create table portfolio_returns as select ${text(["date"])} from ${pq("portfolio_returns")} where id <> ${lit(pid)}`);
    await conn.run(`create table portfolio_metrics as select * from ${pq("portfolio_metrics")} where subject <> ${lit(pid)}`);
    if (opts.portfolio) {
      const [done] = runBacktests(universe, [opts.portfolio]).values();
      await stagePortfolioTables(conn, [{ result: done.result, rebalances: done.bt.rebalances }], "_new");
      for (const t of ["portfolios", "holdings", "portfolio_returns"]) await conn.run(`insert into ${t} by name select * from ${t}_new`);
      await appendTable(conn, "m_new", METRIC_COLS, subjectMetricRows(pid, done.result.returns, benchmarks));
      await conn.run(`insert into portfolio_metrics by name select * from m_new`);
    }
    await exportPortfolioTables(conn, out);
    await exportParquet(conn, "portfolio_metrics", out, [], METRIC_ORDER);
    const prev = readMeta(opts.dataDir, m.snapshotId);
    const meta: SnapshotMeta = { ...prev, id, createdAt: new Date().toISOString(), timingsMs: { rebalance: Math.round(performance.now() - t0), total: Math.round(performance.now() - t0) } };
    publishSnapshot(opts.dataDir, out, meta);
    opts.log.info({ snapshot: id, portfolio: pid, ms: meta.timingsMs.total }, opts.portfolio ? "portfolio rebalanced" : "portfolio removed");
    return meta;
  } catch (e) {
    if (existsSync(out)) discardStaging(out);
    throw e;
  } finally {
    db.close();
  }
}

