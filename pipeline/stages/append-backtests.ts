// The backtests of a nightly append: every portfolio and rule benchmark continues from the state
// the published snapshot recorded after its last day (backtest.ts resumeBacktest), over a panel
// of the new days only. The published history of returns, holdings and levels is kept as it is.

import type { PipelineErrorCode } from "../domain/errors.ts";
import { type BacktestState, buildUniverse, resumeBacktest } from "../portfolios/index.ts";
import type { PortfolioSource } from "../sources/portfolios-json.ts";
import type { UserPortfolio } from "../store/catalog/types.ts";
import { Binds, type Conn, columns } from "../store/duck/duck.ts";
import { asReturns, seriesById } from "../store/read/load-snapshot.ts";
import type { BenchmarkResult } from "../store/snapshot/model.ts";
import type { LevelSeries, PortfolioRules, PricePanel, ReturnSeries } from "../types.ts";
import { loadCompanies, loadIndexSeries, loadPanel, loadRatings } from "./frames.ts";
import { benchmarkRules, indexLevels, type PortfolioItem, readStates } from "./portfolios.ts";

/** A reason the published snapshot cannot be continued; the run recomputes in full instead. */
export class NotAnAppendError extends Error {
  readonly code: PipelineErrorCode = "not_an_append";
  constructor(readonly reason: string) {
    super(reason);
    this.name = "NotAnAppendError";
  }
}

/**
 * The panel of the new days (`new_prices` in `conn`), plus a row for every ticker a state holds
 * that has no price then (all NaN: it keeps its last close).
 */
async function tailPanel(conn: Conn, held: Iterable<string>): Promise<PricePanel> {
  const panel = await loadPanel(conn, "new_prices");
  const known = new Set(panel.tickers);
  for (const t of new Set(held)) {
    if (known.has(t)) continue;
    panel.tickers.push(t);
    panel.close.push(new Float64Array(panel.dates.length).fill(NaN));
  }
  return panel;
}

/** A relation whose values are bound in `b`. */
type Rel = (b: Binds) => string;

export interface PublishedPortfolio {
  ownerId: string | null;
  createdAt: string;
  rules: string;
  previousRebalanceDate: string | null;
}

async function publishedPortfolios(conn: Conn, relation: Rel): Promise<Map<string, PublishedPortfolio>> {
  const b = new Binds();
  const [ids = [], owners = [], created = [], rules = [], prev = []] = (await columns(
    conn,
    `select id, owner_id, created_at, rules, strftime(previous_rebalance_date, '%Y-%m-%d') ` +
      `from ${relation(b)} order by id`,
    b.params,
  )) as (string | null)[][];
  return new Map(
    ids.map((id, i) => [
      id!,
      { ownerId: owners[i], createdAt: created[i]!, rules: rules[i]!, previousRebalanceDate: prev[i] },
    ]),
  );
}

export interface ResumedPortfolios {
  /** The new days' rows of each portfolio (returns, rebalances, today's selection, state). */
  portfolios: PortfolioItem[];
  /** Each portfolio's whole return history (its metric tables are computed over it). */
  returns: Map<string, ReturnSeries>;
}

export interface ResumedBenchmarks {
  benchmarks: BenchmarkResult[];
  states: Map<string, BacktestState | null>;
}

/**
 * The backtests of the snapshot in `base` (a relation maker for its tables), ready to continue
 * over the new days: every portfolio (`defs` and the catalog's `users`) and rule benchmark must
 * have a recorded state and be defined as published. Needs in `conn`: `new_prices`, `companies`
 * (this run's, market caps included), `ratings_tail` (the rating dates that apply to the new
 * days) and `benchmark_all` (every index level, published and new).
 */
export async function tailBacktests(
  conn: Conn,
  base: (t: string, b: Binds) => string,
  defs: PortfolioSource,
  users: UserPortfolio[],
) {
  const states = await readStatesOf(conn, (b) => base("portfolio_state", b));
  const benchStates = await readStatesOf(conn, (b) => base("benchmark_state", b));
  const published = await publishedPortfolios(conn, (b) => base("portfolios", b));
  const list = new Map<string, PortfolioDef>();
  for (const rules of defs.portfolios) list.set(rules.id, { rules, ownerId: null, createdAt: null });
  for (const { ownerId, createdAt, ...rules } of users) list.set(rules.id, { rules, ownerId, createdAt });
  checkContinuable(list, published, states);
  for (const b of defs.benchmarks)
    if (b.series === undefined && !benchStates.has(b.id))
      throw new NotAnAppendError(`benchmark ${b.id} has no recorded backtest state`);
  const held = [...states.values(), ...benchStates.values()].flatMap((s) => s.tickers);
  const panel = await tailPanel(conn, held);
  const universe = buildUniverse(panel, await loadCompanies(conn), await loadRatings(conn, "ratings_tail"));
  const tail: Tail = { conn, base, defs, list, published, states, benchStates, universe };
  return { benchmarks: () => resumeBenchmarks(tail), portfolios: () => resumePortfolios(tail) };
}

interface PortfolioDef {
  rules: PortfolioRules;
  ownerId: string | null;
  createdAt: string | null;
}

/** What the continued backtests read. */
interface Tail {
  conn: Conn;
  base: (t: string, b: Binds) => string;
  defs: PortfolioSource;
  list: Map<string, PortfolioDef>;
  published: Map<string, PublishedPortfolio>;
  states: Map<string, BacktestState>;
  benchStates: Map<string, BacktestState>;
  universe: ReturnType<typeof buildUniverse>;
}

/** Every portfolio defined now must be published as defined, with a recorded state. */
function checkContinuable(
  list: Map<string, PortfolioDef>,
  published: Map<string, PublishedPortfolio>,
  states: Map<string, BacktestState>,
): void {
  for (const [id, p] of list) {
    const was = published.get(id);
    if (
      !was ||
      was.rules !== JSON.stringify(p.rules) ||
      was.ownerId !== p.ownerId ||
      (p.createdAt !== null && was.createdAt !== p.createdAt)
    )
      throw new NotAnAppendError(`portfolio ${id} is not in the published snapshot as defined now`);
    if (!states.has(id)) throw new NotAnAppendError(`portfolio ${id} has no recorded backtest state`);
  }
}

/** Index benchmarks from every level; rule benchmarks continued from their states. */
async function resumeBenchmarks({ conn, base, defs, benchStates, universe }: Tail): Promise<ResumedBenchmarks> {
  const lb = new Binds();
  const levels = await seriesById(conn, base("benchmark_levels", lb), "level", lb.params);
  const indexSeries = await loadIndexSeries(conn, "benchmark_all");
  const out = new Map<string, BacktestState | null>();
  const list = defs.benchmarks.map((b): BenchmarkResult => {
    if (b.series !== undefined) return { ...b, levels: indexLevels(indexSeries, b) };
    const r = resumeBacktest(benchmarkRules(b), benchStates.get(b.id)!, universe);
    out.set(b.id, r.state);
    const old = levels.get(b.id);
    if (!old || old.values.length === 0) throw new NotAnAppendError(`benchmark ${b.id} has no published levels`);
    return {
      ...b,
      levels: continueLevels({ dates: old.dates, levels: old.values }, r.returns.returns, r.returns.dates),
    };
  });
  return { benchmarks: list, states: out };
}

/** Every portfolio continued from its state. */
async function resumePortfolios({ conn, base, list, published, states, universe }: Tail): Promise<ResumedPortfolios> {
  // Published returns (small: one row per day each).
  const rb = new Binds();
  const returns = await seriesById(conn, base("portfolio_returns", rb), "ret", rb.params);
  const items: PortfolioItem[] = [];
  const whole = new Map<string, ReturnSeries>();
  for (const [id, p] of list) {
    const was = published.get(id)!;
    const r = resumeBacktest(p.rules, states.get(id)!, universe);
    const old = asReturns(returns.get(id));
    whole.set(id, { dates: [...old.dates, ...r.returns.dates], returns: concat(old.returns, r.returns.returns) });
    // Only the new days' returns and rebalances: the published rows are kept as they are. The
    // holdings of the last rebalance are not restaged (only the tables are written from items).
    items.push({
      result: {
        rules: p.rules,
        ownerId: p.ownerId,
        createdAt: was.createdAt,
        previousRebalanceDate: r.previousRebalanceDate ?? was.previousRebalanceDate,
        nextRebalanceDate: r.nextRebalanceDate,
        returns: r.returns,
        holdings: [],
        todayDate: r.todayDate,
        todayHoldings: r.todayHoldings,
      },
      rebalances: r.rebalances,
      state: r.state,
    });
  }
  return { portfolios: items, returns: whole };
}

/** levelsFromReturns continued: each new level is the last one compounded, as the whole-history loop does. */
function continueLevels(old: LevelSeries, returns: Float64Array, dates: string[]): LevelSeries {
  const levels = new Float64Array(old.levels.length + returns.length);
  levels.set(old.levels);
  let v = old.levels[old.levels.length - 1];
  for (let i = 0; i < returns.length; i++) levels[old.levels.length + i] = v *= 1 + returns[i];
  return { dates: [...old.dates, ...dates], levels };
}

const concat = (a: Float64Array, b: Float64Array) => {
  const out = new Float64Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
};

async function readStatesOf(conn: Conn, relation: Rel) {
  const b = new Binds();
  try {
    return await readStates(conn, relation(b), b.params);
  } catch (e) {
    throw new NotAnAppendError(
      `the published snapshot has no backtest states (${(e as Error).message.split("\n")[0]})`,
    );
  }
}
