// Stage: backtest every predefined and user portfolio and every rule-based benchmark; write
// holdings, portfolio returns and benchmark levels.
import { backtestPortfolio, buildUniverse, levelsFromReturns, type PortfolioBacktest, type Universe } from "../portfolios/index.ts";
import type { PortfolioSource } from "../sources/portfolios-json.ts";
import type { UserPortfolio } from "../store/catalog-types.ts";
import type { BenchmarkResult, PortfolioResult } from "../store/model.ts";
import { appendTable, exportParquet, type Cell } from "../store/write.ts";
import { RATING_NAMES, type HoldingRow, type PortfolioRules } from "../types.ts";
import type { Conn } from "../store/duck.ts";
import type { StageContext } from "./context.ts";
import type { Frames } from "./frames.ts";

const HOLDING_COLS: [string, "varchar" | "double" | "date"][] = [
  ["portfolio_id", "varchar"],
  ["kind", "varchar"],
  ["date", "date"],
  ["ticker", "varchar"],
  ["price", "double"],
  ...RATING_NAMES.map((n): [string, "double"] => [n, "double"]),
];

export function toResult(rules: PortfolioRules, bt: PortfolioBacktest, ownerId: string | null, createdAt: string | null): PortfolioResult {
  return {
    rules,
    ownerId,
    // A predefined portfolio exists from the start of its history.
    createdAt: createdAt ?? `${bt.rebalances[0]?.date ?? bt.returns.dates[0] ?? "1970-01-01"}T00:00:00.000Z`,
    previousRebalanceDate: bt.previousRebalanceDate,
    nextRebalanceDate: bt.nextRebalanceDate,
    returns: bt.returns,
    holdings: bt.rebalances.find((r) => r.date === bt.previousRebalanceDate)?.holdings ?? [],
    todayDate: bt.todayDate,
    todayHoldings: bt.todayHoldings,
  };
}

export function runBacktests(universe: Universe, list: { rules: PortfolioRules; ownerId: string | null; createdAt: string | null }[]) {
  const out = new Map<string, { result: PortfolioResult; bt: PortfolioBacktest }>();
  for (const p of list) {
    const bt = backtestPortfolio(p.rules, universe);
    out.set(p.rules.id, { result: toResult(p.rules, bt, p.ownerId, p.createdAt), bt });
  }
  return out;
}

/** The benchmarks (every metric table is computed against them), written to `ctx.out`. */
export async function benchmarksStage(ctx: StageContext, frames: Frames, universe: Universe, defs: PortfolioSource): Promise<BenchmarkResult[]> {
  const benchmarks = computeBenchmarks(frames, universe, defs);
  await writeBenchmarkTables(ctx, benchmarks);
  return benchmarks;
}

/** Backtests every predefined and user portfolio and writes their tables. */
export async function portfoliosStage(ctx: StageContext, universe: Universe, defs: PortfolioSource, users: UserPortfolio[]): Promise<Map<string, PortfolioResult>> {
  const list = [
    ...defs.portfolios.map((rules) => ({ rules, ownerId: null, createdAt: null })),
    ...users.map(({ ownerId, createdAt, ...rules }) => ({ rules, ownerId, createdAt })),
  ];
  const done = runBacktests(universe, list);
  ctx.progress?.("portfolios", done.size, list.length);
  await writePortfolioTables(ctx, [...done.values()].map((d) => ({ result: d.result, rebalances: d.bt.rebalances })));
  ctx.log.info({ portfolios: done.size }, "portfolios backtested");
  return new Map([...done].map(([id, d]) => [id, d.result]));
}

/** Index benchmarks from the source's series, rule benchmarks backtested on the universe. */
export function computeBenchmarks(frames: Pick<Frames, "indexSeries">, universe: Universe, defs: PortfolioSource): BenchmarkResult[] {
  return defs.benchmarks.map((b) => {
    if (b.series !== undefined) {
      const levels = frames.indexSeries.get(b.series);
      if (!levels) throw new Error(`benchmark ${b.id} names index series '${b.series}', which the benchmarks table does not have`);
      return { ...b, levels };
    }
    const rules: PortfolioRules = { id: `benchmark-${b.id}`, name: b.name, description: b.description, ...b.rules! };
    return { ...b, levels: levelsFromReturns(backtestPortfolio(rules, universe).returns) };
  });
}

export type PortfolioItem = { result: PortfolioResult; rebalances: { date: string; holdings: HoldingRow[] }[] };

const PORTFOLIO_COLS: [string, "varchar" | "date"][] = [["id", "varchar"], ["owner_id", "varchar"], ["created_at", "varchar"], ["rules", "varchar"], ["previous_rebalance_date", "date"], ["next_rebalance_date", "date"], ["today_date", "date"]];
const RETURN_COLS: [string, "varchar" | "date" | "double"][] = [["id", "varchar"], ["date", "date"], ["ret", "double"]];

/** The three portfolio tables for `items`, staged in `conn` as `<table><suffix>` (dates as text). */
export async function stagePortfolioTables(conn: Conn, items: PortfolioItem[], suffix = ""): Promise<void> {
  await appendTable(conn, `portfolios${suffix}`, PORTFOLIO_COLS, items.map(({ result: r }) => [r.rules.id, r.ownerId, r.createdAt, JSON.stringify(r.rules), r.previousRebalanceDate, r.nextRebalanceDate, r.todayDate]));
  function* holdingRows(): Generator<Cell[]> {
    for (const { result, rebalances } of items) {
      for (const rb of rebalances) for (const h of rb.holdings) yield [result.rules.id, "rebalance", rb.date, h.ticker, h.price, ...RATING_NAMES.map((n) => h[n])];
      for (const h of result.todayHoldings) yield [result.rules.id, "today", h.date, h.ticker, h.price, ...RATING_NAMES.map((n) => h[n])];
    }
  }
  await appendTable(conn, `holdings${suffix}`, HOLDING_COLS, holdingRows());
  function* returnRows(): Generator<Cell[]> {
    for (const { result } of items) for (let i = 0; i < result.returns.dates.length; i++) yield [result.rules.id, result.returns.dates[i], result.returns.returns[i]];
  }
  await appendTable(conn, `portfolio_returns${suffix}`, RETURN_COLS, returnRows());
}

/** Writes the staged portfolio tables as Parquet, turning the date text into DATE. */
export async function exportPortfolioTables(conn: Conn, out: string): Promise<void> {
  await exportParquet(conn, "portfolios", out, ["previous_rebalance_date", "next_rebalance_date", "today_date"], "id");
  await exportParquet(conn, "holdings", out, ["date"], "portfolio_id, kind, date, ticker");
  await exportParquet(conn, "portfolio_returns", out, ["date"], "id, date");
}

export async function writePortfolioTables(ctx: StageContext, items: PortfolioItem[]): Promise<void> {
  await stagePortfolioTables(ctx.conn, items);
  await exportPortfolioTables(ctx.conn, ctx.out);
}

export async function writeBenchmarkTables(ctx: Pick<StageContext, "conn" | "out">, benchmarks: BenchmarkResult[]): Promise<void> {
  const { conn, out } = ctx;
  await appendTable(
    conn,
    "benchmark_defs",
    [["id", "varchar"], ["name", "varchar"], ["description", "varchar"], ["rebalance_frequency", "integer"], ["series", "varchar"], ["rules", "varchar"]],
    benchmarks.map((b) => [b.id, b.name, b.description, b.rebalanceFrequency, b.series ?? null, b.rules ? JSON.stringify(b.rules) : null]),
  );
  await exportParquet(conn, "benchmark_defs", out, [], "id");
  function* levelRows(): Generator<Cell[]> {
    for (const b of benchmarks) for (let i = 0; i < b.levels.dates.length; i++) yield [b.id, b.levels.dates[i], b.levels.levels[i]];
  }
  await appendTable(conn, "benchmark_levels", [["id", "varchar"], ["date", "date"], ["level", "double"]], levelRows());
  await exportParquet(conn, "benchmark_levels", out, ["date"], "id, date");
}
