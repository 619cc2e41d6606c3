// Stage: backtest every predefined and user portfolio and every rule-based benchmark; write
// holdings, portfolio returns and benchmark levels.
import {
  type BacktestState,
  backtestPortfolio,
  levelsFromReturns,
  type PortfolioBacktest,
  type Rebalance,
  type Universe,
} from "../portfolios/index.ts";
import type { PortfolioSource } from "../sources/portfolios-json.ts";
import { type Conn, columns, type Params } from "../store/duck/duck.ts";
import { appendTable, type Cell, exportParquet } from "../store/duck/write.ts";
import type { BenchmarkResult, PortfolioResult } from "../store/snapshot/model.ts";
import { type PortfolioRules, RATING_NAMES } from "../types.ts";
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

export function toResult(
  rules: PortfolioRules,
  bt: PortfolioBacktest,
  ownerId: string | null,
  createdAt: string | null,
): PortfolioResult {
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

export function runBacktests(
  universe: Universe,
  list: { rules: PortfolioRules; ownerId: string | null; createdAt: string | null }[],
) {
  const out = new Map<string, { result: PortfolioResult; bt: PortfolioBacktest }>();
  for (const p of list) {
    const bt = backtestPortfolio(p.rules, universe);
    out.set(p.rules.id, { result: toResult(p.rules, bt, p.ownerId, p.createdAt), bt });
  }
  return out;
}

/** Whether every benchmark is an index series of the source (none is backtested on the universe). */
export const indexBenchmarksOnly = (defs: PortfolioSource) => defs.benchmarks.every((b) => b.series !== undefined);

/**
 * The benchmarks (every metric table is computed against them), written to `ctx.out`. `universe`
 * may be null when every benchmark is an index series (`indexBenchmarksOnly`).
 */
export async function benchmarksStage(
  ctx: Pick<StageContext, "conn" | "out">,
  frames: Pick<Frames, "indexSeries">,
  universe: Universe | null,
  defs: PortfolioSource,
): Promise<BenchmarkResult[]> {
  const { benchmarks, states } = computeBenchmarks(frames, universe, defs);
  await writeBenchmarkTables(ctx, benchmarks, states);
  return benchmarks;
}

export const benchmarkRules = (b: PortfolioSource["benchmarks"][number]): PortfolioRules => ({
  id: `benchmark-${b.id}`,
  name: b.name,
  description: b.description,
  ...b.rules!,
});

/** The level series of an index benchmark, from the source's series. */
export function indexLevels(indexSeries: Frames["indexSeries"], b: PortfolioSource["benchmarks"][number]) {
  const levels = indexSeries.get(b.series!);
  if (!levels)
    throw new Error(`benchmark ${b.id} names index series '${b.series}', which the benchmarks table does not have`);
  return levels;
}

/** Index benchmarks from the source's series, rule benchmarks backtested on the universe (with their end states). */
export function computeBenchmarks(
  frames: Pick<Frames, "indexSeries">,
  universe: Universe | null,
  defs: PortfolioSource,
): { benchmarks: BenchmarkResult[]; states: Map<string, BacktestState | null> } {
  const states = new Map<string, BacktestState | null>();
  const benchmarks = defs.benchmarks.map((b) => {
    if (b.series !== undefined) return { ...b, levels: indexLevels(frames.indexSeries, b) };
    if (!universe) throw new Error(`benchmark ${b.id} is backtested on the universe, which was not given`);
    const bt = backtestPortfolio(benchmarkRules(b), universe);
    states.set(b.id, bt.state);
    return { ...b, levels: levelsFromReturns(bt.returns) };
  });
  return { benchmarks, states };
}

export type PortfolioItem = {
  result: PortfolioResult;
  rebalances: Rebalance[];
  state?: BacktestState | null;
};

/**
 * Where each backtest stands after the last day (backtest.ts BacktestState): a header row (ticker null), then the held
 * stocks in order.
 */
export const STATE_COLS: [string, "varchar" | "integer" | "double" | "date"][] = [
  ["id", "varchar"],
  ["ord", "integer"],
  ["ticker", "varchar"],
  ["shares", "double"],
  ["last", "double"],
  ["cash", "double"],
  ["value", "double"],
  ["calendar_start", "date"],
  ["next_rebalance_date", "date"],
];

function* stateRows(states: Iterable<[string, BacktestState | null | undefined]>): Generator<Cell[]> {
  for (const [id, s] of states) {
    if (!s) continue;
    yield [id, -1, null, null, null, s.cash, s.value, s.calendarStart, s.nextRebalanceDate];
    for (let j = 0; j < s.tickers.length; j++)
      yield [id, j, s.tickers[j], s.shares[j], s.last[j], null, null, null, null];
  }
}

export const stageStateTable = (
  conn: Conn,
  table: string,
  states: Iterable<[string, BacktestState | null | undefined]>,
) => appendTable(conn, table, STATE_COLS, stateRows(states));

/** Reads a state table back (`relation` with dates as DATE or text), by id. */
export async function readStates(conn: Conn, relation: string, params?: Params): Promise<Map<string, BacktestState>> {
  // Ordered by id, then ord: each id's header row (ord −1) comes first, then its holdings in order.
  const [ids = [], tickers = [], shares = [], last = [], cash = [], value = [], start = [], next = []] = (await columns(
    conn,
    `select id, ticker, shares, last, cash, value, cast(calendar_start as varchar), cast(next_rebalance_date as ` +
      `varchar) from ${relation} order by id, ord`,
    params,
  )) as unknown[][];
  const out = new Map<string, BacktestState>();
  for (let i = 0; i < ids.length; ) {
    const id = ids[i] as string;
    let j = i + 1;
    while (j < ids.length && ids[j] === id) j++;
    out.set(id, {
      tickers: tickers.slice(i + 1, j) as string[],
      shares: Float64Array.from(shares.slice(i + 1, j) as number[]),
      last: Float64Array.from(last.slice(i + 1, j) as number[]),
      cash: cash[i] as number,
      value: value[i] as number,
      calendarStart: start[i] as string,
      nextRebalanceDate: next[i] as string,
    });
    i = j;
  }
  return out;
}

const PORTFOLIO_COLS: [string, "varchar" | "date"][] = [
  ["id", "varchar"],
  ["owner_id", "varchar"],
  ["created_at", "varchar"],
  ["rules", "varchar"],
  ["previous_rebalance_date", "date"],
  ["next_rebalance_date", "date"],
  ["today_date", "date"],
];
const RETURN_COLS: [string, "varchar" | "date" | "double"][] = [
  ["id", "varchar"],
  ["date", "date"],
  ["ret", "double"],
];
/** Each rebalance's turnover and the fraction of the portfolio's value its trading cost (docs/portfolios.md). */
const TURNOVER_COLS: [string, "varchar" | "date" | "double"][] = [
  ["id", "varchar"],
  ["date", "date"],
  ["turnover", "double"],
  ["cost", "double"],
];

/** The turnover table of `items` (none: an empty one), staged in `conn` as `table` (dates as text). */
export const stagePortfolioTurnover = (conn: Conn, table: string, items: PortfolioItem[] = []) =>
  appendTable(
    conn,
    table,
    TURNOVER_COLS,
    items.flatMap(({ result, rebalances }) => rebalances.map((r) => [result.rules.id, r.date, r.turnover, r.cost])),
  );

/** The portfolio tables for `items`, staged in `conn` as `<table><suffix>` (dates as text). */
export async function stagePortfolioTables(conn: Conn, items: PortfolioItem[], suffix = ""): Promise<void> {
  await appendTable(
    conn,
    `portfolios${suffix}`,
    PORTFOLIO_COLS,
    items.map(({ result: r }) => [
      r.rules.id,
      r.ownerId,
      r.createdAt,
      JSON.stringify(r.rules),
      r.previousRebalanceDate,
      r.nextRebalanceDate,
      r.todayDate,
    ]),
  );
  function* holdingRows(): Generator<Cell[]> {
    for (const { result, rebalances } of items) {
      for (const rb of rebalances)
        for (const h of rb.holdings)
          yield [result.rules.id, "rebalance", rb.date, h.ticker, h.price, ...RATING_NAMES.map((n) => h[n])];
      for (const h of result.todayHoldings)
        yield [result.rules.id, "today", h.date, h.ticker, h.price, ...RATING_NAMES.map((n) => h[n])];
    }
  }
  await appendTable(conn, `holdings${suffix}`, HOLDING_COLS, holdingRows());
  function* returnRows(): Generator<Cell[]> {
    for (const { result } of items)
      for (let i = 0; i < result.returns.dates.length; i++)
        yield [result.rules.id, result.returns.dates[i], result.returns.returns[i]];
  }
  await appendTable(conn, `portfolio_returns${suffix}`, RETURN_COLS, returnRows());
  await stagePortfolioTurnover(conn, `portfolio_turnover${suffix}`, items);
  await stageStateTable(
    conn,
    `portfolio_state${suffix}`,
    items.map((i) => [i.result.rules.id, i.state]),
  );
}

/** Writes the staged portfolio tables as Parquet, turning the date text into DATE. */
export async function exportPortfolioTables(conn: Conn, out: string): Promise<void> {
  await exportParquet(conn, "portfolios", out, ["previous_rebalance_date", "next_rebalance_date", "today_date"], "id");
  await exportParquet(conn, "holdings", out, ["date"], "portfolio_id, kind, date, ticker");
  await exportParquet(conn, "portfolio_returns", out, ["date"], "id, date");
  await exportParquet(conn, "portfolio_turnover", out, ["date"], "id, date");
  await exportParquet(conn, "portfolio_state", out, ["calendar_start", "next_rebalance_date"], "id, ord");
}

export async function writePortfolioTables(ctx: StageContext, items: PortfolioItem[]): Promise<void> {
  await stagePortfolioTables(ctx.conn, items);
  await exportPortfolioTables(ctx.conn, ctx.out);
}

export async function writeBenchmarkTables(
  ctx: Pick<StageContext, "conn" | "out">,
  benchmarks: BenchmarkResult[],
  states: Map<string, BacktestState | null>,
): Promise<void> {
  const { conn, out } = ctx;
  await stageStateTable(conn, "benchmark_state", states);
  await exportParquet(conn, "benchmark_state", out, ["calendar_start", "next_rebalance_date"], "id, ord");
  await appendTable(
    conn,
    "benchmark_defs",
    [
      ["id", "varchar"],
      ["name", "varchar"],
      ["description", "varchar"],
      ["rebalance_frequency", "integer"],
      ["series", "varchar"],
      ["rules", "varchar"],
    ],
    benchmarks.map((b) => [
      b.id,
      b.name,
      b.description,
      b.rebalanceFrequency,
      b.series ?? null,
      b.rules ? JSON.stringify(b.rules) : null,
    ]),
  );
  await exportParquet(conn, "benchmark_defs", out, [], "id");
  function* levelRows(): Generator<Cell[]> {
    for (const b of benchmarks)
      for (let i = 0; i < b.levels.dates.length; i++) yield [b.id, b.levels.dates[i], b.levels.levels[i]];
  }
  await appendTable(
    conn,
    "benchmark_levels",
    [
      ["id", "varchar"],
      ["date", "date"],
      ["level", "double"],
    ],
    levelRows(),
  );
  await exportParquet(conn, "benchmark_levels", out, ["date"], "id, date");
}
