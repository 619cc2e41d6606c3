// The nightly append's `backtest` step (append.ts says the whole): every portfolio continued from
// its recorded state (append-backtests.ts), its tables and metrics written into the staging folder.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Binds, type Conn, listValue, run as runSql } from "../store/duck/duck.ts";
import { withScratch } from "../store/duck/scratch.ts";
import { datedFiles } from "../store/snapshot/dated-parts.ts";
import { writePortfolioMetrics } from "./analytics.ts";
import { type AppendRecord, type AppendRun, pubRel, readAppendRecord } from "./append.ts";
import { type ResumedPortfolios, tailBacktests } from "./append-backtests.ts";
import { benchmarkLevels } from "./metrics-partition.ts";
import { exportPortfolioTables, stagePortfolioTables } from "./portfolios.ts";

/**
 * The append's `backtest` step: every portfolio continued, its published rows (of the ones still
 * defined) kept and the new days' rows added. It reads only what the ingest step left in the staging
 * folder (its record and files), on a database of its own.
 */
export async function appendPortfolios(r: Pick<AppendRun, "ctx" | "timings">): Promise<void> {
  const t0 = performance.now();
  const { out } = r.ctx;
  const record = readAppendRecord(out);
  await withScratch(async (conn) => {
    await tailTables(conn, out, record);
    const tail = await tailBacktests(conn, pubRel(record.base), record.definitions, record.users);
    await continuePortfolios(conn, out, record.base, await tail.portfolios());
  });
  r.timings.portfolios = Math.round(performance.now() - t0);
}

/** What tailBacktests needs of this run in `conn`, from the files the ingest step staged. */
async function tailTables(conn: Conn, out: string, record: AppendRecord): Promise<void> {
  await conn.run("create table new_prices as select * from read_parquet($f)", { f: record.newPrices });
  await conn.run("create table companies as select * from read_parquet($f)", { f: join(out, "companies.parquet") });
  const b = new Binds();
  await runSql(
    conn,
    `create table ratings_tail as select * from read_parquet(${b.v(listValue(datedFiles(record.base, "ratings")))}` +
      `::varchar[], union_by_name = true) where ` +
      // null: no published rating date applies to the new days
      (record.tailRatingDate === null ? "false" : `date = ${b.v(record.tailRatingDate)}::date`) +
      (record.newRatings ? ` union all by name select * from read_parquet(${b.v(record.newRatings)})` : ""),
    b.params,
  );
}

/** The continued portfolios' tables and metrics into `out`. */
async function continuePortfolios(conn: Conn, out: string, base: string, resumed: ResumedPortfolios): Promise<void> {
  const pub = pubRel(base);
  const ids = resumed.portfolios.map((p) => p.result.rules.id);
  await stagePortfolioTables(conn, resumed.portfolios, "_new");
  const text = (cols: string[]) => `* replace (${cols.map((c) => `cast(${c} as varchar) as ${c}`).join(", ")})`;
  await conn.run(`create table portfolios as select * from portfolios_new`);
  const hb = new Binds();
  await runSql(
    conn,
    `create table holdings as select ${text(["date"])} from ${pub("holdings", hb)} where kind = 'rebalance' and ` +
      `portfolio_id in (${hb.each(ids)}) union all by name select * from holdings_new`,
    hb.params,
  );
  const pb = new Binds();
  await runSql(
    conn,
    `create table portfolio_returns as select ${text(["date"])} from ${pub("portfolio_returns", pb)} where id in ` +
      `(${pb.each(ids)}) union all by name select * from portfolio_returns_new`,
    pb.params,
  );
  await conn.run(`create table portfolio_state as select * from portfolio_state_new`);
  await continuedTurnover(conn, base, ids);
  await exportPortfolioTables(conn, out);
  await writePortfolioMetrics(
    { conn, out },
    [...resumed.returns].map(([id, returns]) => [id, { returns }] as [string, { returns: typeof returns }]),
    await benchmarkLevels(conn, out),
  );
}

/**
 * The published turnover rows of the continued portfolios and the new days' ones. A base from before
 * costs existed has none: the new rebalances' rows alone, until a full run recomputes the history.
 */
async function continuedTurnover(conn: Conn, base: string, ids: string[]): Promise<void> {
  if (!existsSync(join(base, "portfolio_turnover.parquet"))) {
    await conn.run("create table portfolio_turnover as select * from portfolio_turnover_new");
    return;
  }
  const b = new Binds();
  await runSql(
    conn,
    `create table portfolio_turnover as select * replace (cast(date as varchar) as date) from ` +
      `${pubRel(base)("portfolio_turnover", b)} where id in (${b.each(ids)}) ` +
      `union all by name select * from portfolio_turnover_new`,
    b.params,
  );
}
