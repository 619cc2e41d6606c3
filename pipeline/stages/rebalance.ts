// The rebalance of one portfolio: its steps' stage functions (pipeline/run/plan.ts KIND_STAGES.rebalance)
// recompute it against the published snapshot into a staging folder; every other table is
// hard-linked from the current snapshot, so a user's change costs one backtest, not a pipeline
// run. The executor (jobs/local/rebalance-run.ts) publishes it compare-and-swap: when another publish
// moved the manifest meanwhile, the rebalance is computed again on the snapshot now current, so it
// never brings back the older snapshot's other tables.
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { PipelineErrorCode } from "../domain/errors.ts";
import { buildUniverse } from "../portfolios/index.ts";
import { type Conn, columns, listValue, run, setVariable } from "../store/duck/duck.ts";
import { appendTable, exportParquet } from "../store/duck/write.ts";
import { loadSnapshotBenchmarks } from "../store/read/load-snapshot.ts";
import { datedFiles } from "../store/snapshot/dated-parts.ts";
import { linkTree } from "../store/snapshot/link.ts";
import { METRIC_COLS, METRIC_ORDER } from "../store/snapshot/metric-tables.ts";
import { type SnapshotMeta, snapshotMeta } from "../store/snapshot/snapshots.ts";
import type { PortfolioRules } from "../types.ts";
import type { Log } from "./context.ts";
import { loadCompanies, loadPanel, loadRatings } from "./frames.ts";
import { subjectMetricRows } from "./metrics-partition.ts";
import {
  exportPortfolioTables,
  runBacktests,
  stagePortfolioTables,
  stagePortfolioTurnover,
  stageStateTable,
} from "./portfolios.ts";

const REWRITTEN = new Set([
  "portfolios.parquet",
  "holdings.parquet",
  "portfolio_returns.parquet",
  "portfolio_turnover.parquet",
  "portfolio_state.parquet",
  "portfolio_metrics.parquet",
  "meta.json",
]);

export interface PortfolioSpec {
  rules: PortfolioRules;
  ownerId: string | null;
  createdAt: string | null;
}

export interface RebalanceOptions {
  dataDir: string;
  log: Log;
  /** A fixed definition to apply (null with `dropId`: remove that portfolio). */
  portfolio?: PortfolioSpec | null;
  dropId?: string;
  /**
   * Or a portfolio id looked up afresh on every attempt: `lookup` (the catalog's user portfolios)
   * first, then the published snapshot's predefined one; a user portfolio the catalog no longer
   * has is removed.
   */
  portfolioId?: string;
  lookup?: (id: string) => PortfolioSpec | null;
  /** The BullMQ job publishing, for the manifest's log. */
  job?: string;
  /** Compare-and-swap attempts before giving up (each one recomputes on the current snapshot). */
  attempts?: number;
}

export class PortfolioNotFoundError extends Error {
  readonly code: PipelineErrorCode = "portfolio_not_found";
  constructor(readonly id: string) {
    super(`no portfolio ${id} in the catalog or the published snapshot`);
    this.name = "PortfolioNotFoundError";
  }
}

/** The state the rebalance's steps share (pipeline/run/plan.ts KIND_STAGES.rebalance). */
export interface RebalanceRun {
  conn: Conn;
  /** The published snapshot it builds on. */
  from: string;
  /** The staging folder. */
  out: string;
  /** The portfolio, and its definition (null: remove it). */
  pid: string;
  portfolio: PortfolioSpec | null;
}

/** The portfolio `opts` asks for and its definition now (null: remove it), on the snapshot in `from`. */
export async function rebalanceTarget(
  conn: Conn,
  from: string,
  opts: RebalanceOptions,
): Promise<{ pid: string; portfolio: PortfolioSpec | null }> {
  const pid = opts.portfolioId ?? opts.portfolio?.rules.id ?? opts.dropId!;
  const portfolio =
    opts.portfolioId !== undefined
      ? await lookupPortfolio(conn, join(from, "portfolios.parquet"), pid, opts.lookup)
      : (opts.portfolio ?? null);
  return { pid, portfolio };
}

/**
 * The rebalance's `backtest` step: every other table linked from the published snapshot, the
 * portfolio tables of every other portfolio kept and this one's backtest added.
 */
export async function rebalanceBacktest(r: RebalanceRun): Promise<void> {
  linkTree(r.from, r.out, (f) => REWRITTEN.has(f));
  await publishedViews(r.conn, r.from);
  await keepOtherPortfolios(r);
  if (r.portfolio) await addPortfolio(r, r.portfolio);
  await exportPortfolioTables(r.conn, r.out);
  await exportParquet(r.conn, "portfolio_metrics", r.out, [], METRIC_ORDER);
}

/** The published snapshot's meta with this one's id, time and timings. */
export function rebalanceMeta(prev: SnapshotMeta, id: string, ms: number): SnapshotMeta {
  return snapshotMeta({ ...prev, id, timingsMs: { rebalance: ms, total: ms } });
}

/** companies, prices and ratings as views over the published files. */
async function publishedViews(conn: Conn, from: string): Promise<void> {
  // views cannot bind values: each reads its files from a session variable (duck.ts, setVariable)
  await setVariable([conn], "companies_file", join(from, "companies.parquet"));
  await conn.run("create view companies as select * from read_parquet(getvariable('companies_file'))");
  await setVariable([conn], "prices_files", listValue(datedFiles(from, "prices")));
  await conn.run("create view prices as select * from read_parquet(getvariable('prices_files'), union_by_name = true)");
  await setVariable([conn], "ratings_files", listValue(datedFiles(from, "ratings")));
  await conn.run(
    "create view ratings as select * from read_parquet(getvariable('ratings_files'), union_by_name = true)",
  );
}

/** The published rows of every other portfolio (dates as text, like freshly staged rows). */
async function keepOtherPortfolios({ conn, from, pid }: RebalanceRun): Promise<void> {
  const pq = (t: string) => ({ f: join(from, `${t}.parquet`) });
  const text = (cols: string[]) => `* replace (${cols.map((c) => `cast(${c} as varchar) as ${c}`).join(", ")})`;
  await run(
    conn,
    `create table portfolios as select ${text(["previous_rebalance_date", "next_rebalance_date", "today_date"])} ` +
      `from read_parquet($f) where id <> $pid`,
    { ...pq("portfolios"), pid },
  );
  await run(
    conn,
    `create table holdings as select ${text(["date"])} from read_parquet($f) where portfolio_id <> $pid`,
    {
      ...pq("holdings"),
      pid,
    },
  );
  await run(conn, `create table portfolio_returns as select ${text(["date"])} from read_parquet($f) where id <> $pid`, {
    ...pq("portfolio_returns"),
    pid,
  });
  await run(conn, "create table portfolio_metrics as select * from read_parquet($f) where subject <> $pid", {
    ...pq("portfolio_metrics"),
    pid,
  });
  await keepTurnover(conn, join(from, "portfolio_turnover.parquet"), pid);
  // Snapshots from before the backtest states have none: a nightly append recomputes in full then.
  if (existsSync(join(from, "portfolio_state.parquet")))
    await run(
      conn,
      `create table portfolio_state as select ${text(["calendar_start", "next_rebalance_date"])} from ` +
        `read_parquet($f) where id <> $pid`,
      { ...pq("portfolio_state"), pid },
    );
  else await stageStateTable(conn, "portfolio_state", []);
}

/**
 * The published turnover rows of every other portfolio. A snapshot from before costs existed has
 * none: its other portfolios keep no turnover until the next full run recomputes them.
 */
async function keepTurnover(conn: Conn, file: string, pid: string): Promise<void> {
  if (!existsSync(file)) {
    await stagePortfolioTurnover(conn, "portfolio_turnover");
    return;
  }
  await run(
    conn,
    "create table portfolio_turnover as select * replace (cast(date as varchar) as date) from read_parquet($f) " +
      "where id <> $pid",
    { f: file, pid },
  );
}

/** The portfolio's backtest on the published universe, its rows added to the kept ones. */
async function addPortfolio({ conn, from, pid }: RebalanceRun, portfolio: PortfolioSpec): Promise<void> {
  const universe = buildUniverse(await loadPanel(conn), await loadCompanies(conn), await loadRatings(conn));
  const benchmarks = await loadSnapshotBenchmarks(conn, from);
  const [done] = runBacktests(universe, [portfolio]).values();
  await stagePortfolioTables(
    conn,
    [{ result: done.result, rebalances: done.bt.rebalances, state: done.bt.state }],
    "_new",
  );
  for (const t of ["portfolios", "holdings", "portfolio_returns", "portfolio_turnover", "portfolio_state"])
    await conn.run(`insert into ${t} by name select * from ${t}_new`);
  await appendTable(conn, "m_new", METRIC_COLS, subjectMetricRows(pid, done.result.returns, benchmarks));
  await conn.run(`insert into portfolio_metrics by name select * from m_new`);
}

/** The catalog's definition, else the published predefined one; null: a deleted user portfolio (drop it). */
async function lookupPortfolio(
  conn: Conn,
  portfoliosFile: string,
  id: string,
  lookup?: (id: string) => PortfolioSpec | null,
): Promise<PortfolioSpec | null> {
  const user = lookup?.(id);
  if (user) return user;
  const [rules = [], owners = []] = (await columns(
    conn,
    "select rules, owner_id from read_parquet($f) where id = $id",
    { f: portfoliosFile, id },
  )) as [string[], (string | null)[]];
  if (!rules.length) throw new PortfolioNotFoundError(id);
  return owners[0] === null ? { rules: JSON.parse(rules[0]) as PortfolioRules, ownerId: null, createdAt: null } : null;
}
