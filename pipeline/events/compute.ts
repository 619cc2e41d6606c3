// The events of one publish, from the snapshot it replaces and the new one, in DuckDB set
// operations over their Parquet tables (paths bound, never SQL text). The tables `ev_rating` and
// `ev_portfolio` stay on the connection for the fan-out (fanout.ts) to join.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type Conn, ident, rows } from "../store/duck/duck.ts";
import { RATINGS_LATEST } from "../store/snapshot/reader-index.ts";
import type { SnapshotMeta } from "../store/snapshot/snapshots.ts";
import { RATING_CAMEL, RATING_NAMES } from "../types.ts";
import type { HeldStock, PortfolioRebalanced, RatingChanged, RatingState, ServiceEvent } from "./types.ts";

export interface EventInputs {
  /** The published snapshot's folder. */
  currentDir: string;
  /** The folder of the snapshot it replaced; null for the store's first publish (no changes are events then). */
  previousDir: string | null;
}

/** Companies (id, name) of the tickers the rebalance events hold, for their trades. */
export type CompanyNames = Map<string, { id: string; name: string }>;

export interface ComputedEvents {
  events: ServiceEvent[];
  companies: CompanyNames;
}

/**
 * A deterministic event id (SQL over the bound `$snap` and `$type`): the same snapshot, type and
 * subject give the same id.
 */
const eventIdSql = (subject: string) => `'evt_' || left(sha256($snap || '|' || $type || '|' || ${subject}), 32)`;

export async function computeEvents(conn: Conn, input: EventInputs): Promise<ComputedEvents> {
  const meta = readMetaOf(input.currentDir);
  const prev = input.previousDir ? readMetaOf(input.previousDir) : null;
  const ratings = await ratingEvents(conn, meta.id, input);
  const portfolios = await portfolioEvents(conn, meta.id, input);
  const companies = await companyNames(conn, input.currentDir);
  const tickers = await tickerChanges(conn, input);
  const base = { timestamp: meta.createdAt, snapshot: meta.id };
  const published: ServiceEvent = {
    id: (
      await rows<{ id: string }>(conn, `select ${eventIdSql("$snap")} id`, {
        snap: meta.id,
        type: "snapshot.published",
      })
    )[0].id,
    type: "snapshot.published",
    ...base,
    data: {
      snapshotId: meta.id,
      previousSnapshotId: prev?.id ?? null,
      sourceId: meta.sourceId,
      createdAt: meta.createdAt,
      counts: meta.counts,
      changes: { ratingsChanged: ratings.length, portfoliosRebalanced: portfolios.length, ...tickers },
    },
  };
  return {
    events: [
      published,
      ...ratings.map((r) => ({ id: r.id, type: "rating.changed" as const, ...base, data: r.data })),
      ...portfolios.map((p) => ({ id: p.id, type: "portfolio.rebalanced" as const, ...base, data: p.data })),
    ],
    companies,
  };
}

export function readMetaOf(dir: string): SnapshotMeta {
  return JSON.parse(readFileSync(join(dir, "meta.json"), "utf8")) as SnapshotMeta;
}

function stateOf(r: Record<string, unknown>, prefix: string): RatingState | null {
  if (r[`${prefix}date`] == null) return null;
  const s: Record<string, unknown> = { date: String(r[`${prefix}date`]) };
  for (const k of RATING_NAMES) s[RATING_CAMEL[k]] = r[`${prefix}${k}`] == null ? null : Number(r[`${prefix}${k}`]);
  return s as unknown as RatingState;
}

/** Tickers whose latest rating differs in any of the seven values (or newly rated), one event each. */
async function ratingEvents(conn: Conn, snap: string, input: EventInputs) {
  const prevFile = input.previousDir && join(input.previousDir, RATINGS_LATEST);
  if (!prevFile || !existsSync(prevFile)) {
    await conn.run(
      "create or replace table ev_rating (event_id varchar, ticker varchar, total_rating double, " +
        "prev_total_rating double)",
    );
    return [];
  }
  const cols = RATING_NAMES.map((k) => `n.${ident(k)}, o.${ident(k)} as ${ident(`prev_${k}`)}`).join(", ");
  const differs = RATING_NAMES.map((k) => `n.${ident(k)} is distinct from o.${ident(k)}`).join(" or ");
  await conn.run(
    "create or replace table ev_rating as " +
      `select ${eventIdSql("n.ticker")} event_id, n.ticker, cast(n.date as varchar) date, ` +
      `cast(o.date as varchar) prev_date, ${cols} ` +
      "from read_parquet($cur) n left join read_parquet($prev) o on o.ticker = n.ticker " +
      `where o.ticker is null or ${differs}`,
    { snap, type: "rating.changed", cur: join(input.currentDir, RATINGS_LATEST), prev: prevFile },
  );
  const rs = await rows(conn, "select * from ev_rating order by ticker");
  return rs.map((r) => ({
    id: String(r.event_id),
    data: { ticker: String(r.ticker), previous: stateOf(r, "prev_"), current: stateOf(r, "")! } as RatingChanged,
  }));
}

/** The latest rebalance's holdings of every portfolio of a snapshot, as SQL over bound `$<name>`. */
const latestHoldings = (name: string) =>
  `select portfolio_id, date, ticker, price, total_rating from read_parquet($${name}) ` +
  "where kind = 'rebalance' qualify date = max(date) over (partition by portfolio_id)";

/** Portfolios whose latest rebalance moved to a new date or holds other stocks (a new portfolio too). */
async function portfolioEvents(conn: Conn, snap: string, input: EventInputs) {
  const cur = join(input.currentDir, "holdings.parquet");
  const prev = input.previousDir && join(input.previousDir, "holdings.parquet");
  if (!prev || !existsSync(prev) || !existsSync(cur)) {
    await conn.run("create or replace table ev_holdings (portfolio_id varchar, ticker varchar)");
    await conn.run("create or replace table ev_portfolio (event_id varchar, portfolio_id varchar, owner_id varchar)");
    return [];
  }
  await conn.run(`create or replace table ev_holdings as ${latestHoldings("cur")}`, { cur });
  await conn.run(
    "create or replace table ev_portfolio as " +
      "with n as (select portfolio_id, any_value(date) date, list(ticker order by ticker) tickers " +
      "from ev_holdings group by portfolio_id), " +
      "o as (select portfolio_id, any_value(date) date, list(ticker order by ticker) tickers " +
      `from (${latestHoldings("prev")}) group by portfolio_id) ` +
      `select ${eventIdSql("n.portfolio_id")} event_id, n.portfolio_id, p.owner_id, ` +
      "cast(n.date as varchar) date, cast(o.date as varchar) prev_date, n.tickers, o.tickers prev_tickers " +
      "from n join read_parquet($owners) p on p.id = n.portfolio_id left join o using (portfolio_id) " +
      "where o.portfolio_id is null or n.date <> o.date or n.tickers <> o.tickers",
    { snap, type: "portfolio.rebalanced", prev, owners: join(input.currentDir, "portfolios.parquet") },
  );
  const evs = await rows(conn, "select * from ev_portfolio order by portfolio_id");
  const held = await rows<{ portfolio_id: string } & HeldStock>(
    conn,
    'select h.portfolio_id, h.ticker, h.price, h.total_rating "totalRating" from ev_holdings h ' +
      "semi join ev_portfolio e using (portfolio_id) order by h.portfolio_id, h.ticker",
  );
  const byPortfolio = new Map<string, HeldStock[]>();
  for (const h of held) {
    const list = byPortfolio.get(h.portfolio_id);
    if (list) list.push(h);
    else byPortfolio.set(h.portfolio_id, [h]);
  }
  return evs.map((r) => {
    const now = (r.tickers as string[]) ?? [];
    const before = (r.prev_tickers as string[] | null) ?? [];
    const data: PortfolioRebalanced = {
      portfolioId: String(r.portfolio_id),
      rebalanceDate: String(r.date),
      previousRebalanceDate: r.prev_date == null ? null : String(r.prev_date),
      holdings: (byPortfolio.get(String(r.portfolio_id)) ?? []).map((h) => ({
        ticker: h.ticker,
        price: Number(h.price),
        totalRating: h.totalRating == null ? null : Number(h.totalRating),
      })),
      added: now.filter((t) => !before.includes(t)),
      removed: before.filter((t) => !now.includes(t)),
    };
    return { id: String(r.event_id), data };
  });
}

async function companyNames(conn: Conn, dir: string): Promise<CompanyNames> {
  const rs = await rows<{ ticker: string; id: string; name: string }>(
    conn,
    "select c.ticker, cast(c.id as varchar) id, c.name from read_parquet($1) c " +
      "semi join (select distinct ticker from ev_holdings) h using (ticker)",
    [join(dir, "companies.parquet")],
  );
  return new Map(rs.map((r) => [r.ticker, { id: r.id, name: r.name }]));
}

/** Companies the new snapshot lists and the old did not, and back (none for a first publish). */
async function tickerChanges(conn: Conn, input: EventInputs) {
  if (!input.previousDir) return { tickersAdded: [], tickersRemoved: [] };
  const p = { cur: join(input.currentDir, "companies.parquet"), prev: join(input.previousDir, "companies.parquet") };
  const list = async (a: string, b: string) =>
    (
      await rows<{ ticker: string }>(
        conn,
        `select ticker from read_parquet($${a}) except select ticker from read_parquet($${b}) order by ticker`,
        p,
      )
    ).map((r) => r.ticker);
  return { tickersAdded: await list("cur", "prev"), tickersRemoved: await list("prev", "cur") };
}
