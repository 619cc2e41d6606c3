// Builds the in-memory Snapshot the API serves from one published snapshot folder.
import { existsSync } from "node:fs";
import { join } from "node:path";
import {
  type HoldingRow,
  type LevelSeries,
  type MetricRow,
  type PortfolioRules,
  RATING_NAMES,
  type RatingRow,
  type ReturnSeries,
} from "../../types.ts";
import { Binds, type Conn, columns, listValue, openDuck, type Params, setVariable } from "../duck/duck.ts";
import { datedFiles } from "../snapshot/dated-parts.ts";
import { financialTable, readFinancialTables } from "../snapshot/financial-tables.ts";
import { readMetricRows } from "../snapshot/metric-tables.ts";
import type { BenchmarkResult, CompanyFinancials, PortfolioResult, Snapshot } from "../snapshot/model.ts";
import { readMeta, snapshotDir } from "../snapshot/snapshots.ts";
import { loadCompanies, loadRatings } from "./frame-reads.ts";
import { readTurnover, rebalanceHistory } from "./rebalance-history.ts";

/** `<dir>/<t>.parquet` as a relation, its path bound in `b`. */
const pq = (dir: string, t: string, b: Binds) => `read_parquet(${b.v(join(dir, `${t}.parquet`))})`;

/** Long (id, date, value) rows → one series per id; dates cross as integer indexes (fast). */
export async function seriesById(
  conn: Conn,
  source: string,
  valueCol: string,
  params?: Params,
): Promise<Map<string, { dates: string[]; values: Float64Array }>> {
  const [dates = []] = (await columns(
    conn,
    `select distinct strftime(date, '%Y-%m-%d') from ${source} order by 1`,
    params,
  )) as [string[]];
  const [ids = [], di = [], v = []] = (await columns(
    conn,
    `select id, (dense_rank() over (order by date) - 1)::integer, ${valueCol} from ${source} order by id, date`,
    params,
  )) as [string[], number[], number[]];
  const out = new Map<string, { dates: string[]; values: Float64Array }>();
  let start = 0;
  for (let i = 1; i <= ids.length; i++) {
    if (i === ids.length || ids[i] !== ids[start]) {
      const values = new Float64Array(i - start);
      const ds = new Array<string>(i - start);
      for (let k = start; k < i; k++) {
        values[k - start] = v[k];
        ds[k - start] = dates[di[k]];
      }
      out.set(ids[start], { dates: ds, values });
      start = i;
    }
  }
  return out;
}

export const asReturns = (s: { dates: string[]; values: Float64Array } | undefined): ReturnSeries => ({
  dates: s?.dates ?? [],
  returns: s?.values ?? new Float64Array(),
});

async function loadHoldings(
  conn: Conn,
  dir: string,
  id?: string,
): Promise<Map<string, { rebalance: Map<string, HoldingRow[]>; today: HoldingRow[] }>> {
  const b = new Binds();
  const cols = await columns(
    conn,
    `select portfolio_id, kind, strftime(date, '%Y-%m-%d'), ticker, price, ${RATING_NAMES.join(", ")} ` +
      `from ${pq(dir, "holdings", b)} ${id === undefined ? "" : `where portfolio_id = ${b.v(id)}`} order by ` +
      `portfolio_id, kind, date, ticker`,
    b.params,
  );
  const [pid = [], kind = [], date = [], ticker = [], price = []] = cols as [
    string[],
    string[],
    string[],
    string[],
    number[],
  ];
  const out = new Map<string, { rebalance: Map<string, HoldingRow[]>; today: HoldingRow[] }>();
  for (let i = 0; i < pid.length; i++) {
    const h = { date: date[i], ticker: ticker[i], price: price[i] } as HoldingRow;
    RATING_NAMES.forEach((n, k) => {
      h[n] = (cols[k + 5] as number[])[i];
    });
    const p = out.get(pid[i]) ?? { rebalance: new Map<string, HoldingRow[]>(), today: [] as HoldingRow[] };
    out.set(pid[i], p);
    if (kind[i] === "today") p.today.push(h);
    else p.rebalance.set(date[i], [...(p.rebalance.get(date[i]) ?? []), h]);
  }
  return out;
}

/**
 * Whether a snapshot folder has the typed tables this loader reads (`docs/data/snapshot.md`); one
 * written before them (metric rows and statements as JSON text) must be rebuilt by a run.
 */
export const hasTypedTables = (dir: string) => existsSync(join(dir, "stock_metrics"));

/** A table stored whole (`<t>.parquet`) or partitioned (`<t>/part-*.parquet`), as a relation; its path bound in `b`. */
export const tableOf = (dir: string, t: string, b: Binds) =>
  existsSync(join(dir, t)) ? `read_parquet(${b.v(join(dir, t, "*.parquet"))})` : pq(dir, t, b);

/**
 * View `ratings` over a snapshot's dated ratings files on each connection: DuckDB cannot prepare
 * `create view`, so the view reads the file list from a session variable bound per connection.
 */
export async function setRatingsView(conns: Conn[], dir: string): Promise<void> {
  await setVariable(conns, "ratings_files", listValue(datedFiles(dir, "ratings")));
  await conns[0].run(
    "create or replace view ratings as select * from read_parquet(getvariable('ratings_files'), union_by_name = true)",
  );
}

/** Benchmarks with their value index, from a snapshot folder. */
export async function loadSnapshotBenchmarks(conn: Conn, dir: string): Promise<BenchmarkResult[]> {
  const lb = new Binds();
  const levels = await seriesById(conn, pq(dir, "benchmark_levels", lb), "level", lb.params);
  const b = new Binds();
  const [bId = [], bName = [], bDesc = [], bFreq = [], bSeries = [], bRules = []] = (await columns(
    conn,
    `select id, name, description, rebalance_frequency, series, rules ` +
      `from ${pq(dir, "benchmark_defs", b)} order by id::integer`,
    b.params,
  )) as unknown[][];
  return bId.map((idv, i) => {
    const l = levels.get(String(idv));
    return {
      id: String(idv),
      name: String(bName[i]),
      description: String(bDesc[i]),
      rebalanceFrequency: Number(bFreq[i]),
      ...(bSeries[i] != null ? { series: String(bSeries[i]) } : {}),
      ...(bRules[i] != null ? { rules: JSON.parse(String(bRules[i])) } : {}),
      levels: { dates: l?.dates ?? [], levels: l?.values ?? new Float64Array() } satisfies LevelSeries,
    };
  });
}

/** Portfolios with returns and holdings (`id`: one portfolio only), from a snapshot folder. */
export async function readPortfolios(conn: Conn, dir: string, id?: string): Promise<Map<string, PortfolioResult>> {
  const one = (b: Binds) => (id === undefined ? "" : `where id = ${b.v(id)}`);
  const rb = new Binds();
  const pret = await seriesById(
    conn,
    `(select * from ${pq(dir, "portfolio_returns", rb)} ${one(rb)})`,
    "ret",
    rb.params,
  );
  const holdings = await loadHoldings(conn, dir, id);
  const turnover = await readTurnover(conn, dir, id);
  const b = new Binds();
  const [pId = [], owner = [], created = [], rules = [], prev = [], next = [], today = []] = (await columns(
    conn,
    `select id, owner_id, created_at, rules, strftime(previous_rebalance_date, '%Y-%m-%d'), ` +
      `strftime(next_rebalance_date, '%Y-%m-%d'), strftime(today_date, '%Y-%m-%d') ` +
      `from ${pq(dir, "portfolios", b)} ${one(b)}`,
    b.params,
  )) as (string | null)[][];
  const portfolios = new Map<string, PortfolioResult>();
  pId.forEach((pid, i) => {
    const h = holdings.get(pid!);
    portfolios.set(pid!, {
      rules: JSON.parse(rules[i]!) as PortfolioRules,
      ownerId: owner[i],
      createdAt: created[i]!,
      previousRebalanceDate: prev[i],
      nextRebalanceDate: next[i],
      returns: asReturns(pret.get(pid!)),
      holdings: (prev[i] && h?.rebalance.get(prev[i]!)) || [],
      todayDate: today[i],
      todayHoldings: h?.today ?? [],
      rebalances: rebalanceHistory(h?.rebalance, turnover.get(pid!)),
    });
  });
  return portfolios;
}

export async function loadSnapshot(dataDir: string, id: string): Promise<Snapshot> {
  const dir = snapshotDir(dataDir, id);
  const meta = readMeta(dataDir, id);
  const db = await openDuck();
  const conn = db.conn;
  try {
    // views cannot bind values: they read their files from session variables (duck.ts, setVariable)
    await setVariable([conn], "companies_file", join(dir, "companies.parquet"));
    await conn.run("create view companies as select * from read_parquet(getvariable('companies_file'))");
    await setRatingsView([conn], dir);
    const companies = await loadCompanies(conn);
    const ratings = await loadRatings(conn);
    const ratingsByDate = new Map<string, RatingRow[]>();
    for (const r of ratings) ratingsByDate.set(r.date, [...(ratingsByDate.get(r.date) ?? []), r]);
    for (const list of ratingsByDate.values()) list.sort((a, b) => (a.ticker < b.ticker ? -1 : 1));

    const sb = new Binds();
    const stockReturns = new Map(
      [...(await seriesById(conn, tableOf(dir, "stock_returns", sb), "ret", sb.params))].map(([k, s]) => [
        k,
        asReturns(s),
      ]),
    );
    const benchmarks = await loadSnapshotBenchmarks(conn, dir);

    const portfolios = await readPortfolios(conn, dir);

    const metrics = new Map<string, MetricRow[]>();
    const benchName = new Map(benchmarks.map((b) => [b.id, b.name]));
    const nameOf = (id: string) => benchName.get(id) ?? id;
    const smb = new Binds();
    await readMetricRows(conn, tableOf(dir, "stock_metrics", smb), "stock", (t) => t, nameOf, metrics, "", smb.params);
    const pmb = new Binds();
    const pmRel = tableOf(dir, "portfolio_metrics", pmb);
    await readMetricRows(conn, pmRel, "portfolio", () => "Portfolio", nameOf, metrics, "", pmb.params);
    const financials: Map<string, CompanyFinancials> = existsSync(join(dir, financialTable("income")))
      ? await readFinancialTables(conn, (s, b) => tableOf(dir, financialTable(s), b))
      : new Map();
    return {
      id,
      createdAt: meta.createdAt,
      sourceId: meta.sourceId,
      lastPriceDate: meta.lastPriceDate,
      companies,
      companyByTicker: new Map(companies.map((c) => [c.ticker.toUpperCase(), c])),
      companyById: new Map(companies.map((c) => [c.id, c])),
      ratingDates: [...ratingsByDate.keys()].sort(),
      ratingsByDate,
      stockReturns,
      benchmarks,
      benchmarkById: new Map(benchmarks.map((b) => [b.id, b])),
      portfolios,
      metrics,
      financials,
    };
  } finally {
    db.close();
  }
}
