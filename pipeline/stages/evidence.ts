// The evidence step (pipeline/run/plan.ts): what every rating the snapshot serves predicted, written
// into the snapshot as `rating_evidence` (one row per rating and horizon) and `rating_evidence_ic`
// (the per-date IC series). It reads only the staged ratings and the closes at the dates it needs
// (each rating date D, its forward dates D_h, the momentum baseline's two dates), in one DuckDB
// query ordered by date, and holds one date's stocks at a time (definitions: pipeline/ratings/evidence.ts).

import {
  EVIDENCE_RATINGS,
  EvidenceAccumulator,
  evaluateSorted,
  HORIZONS,
  type RatingEvidence,
  sortedRows,
} from "../ratings/evidence.ts";
import { evaluationDates } from "../ratings/evidence-dates.ts";
import { isoFromEpochDay } from "../shared/dates.ts";
import { Binds, type Conn, columns, ident } from "../store/duck/duck.ts";
import { eachNumericChunk } from "../store/duck/typed-read.ts";
import { appendTable, exportParquet } from "../store/duck/write.ts";
import { datedRelation } from "../store/snapshot/dated-parts.ts";
import {
  EVIDENCE_IC_COLUMNS,
  EVIDENCE_IC_TABLE,
  EVIDENCE_SUMMARY_COLUMNS,
  EVIDENCE_TABLE,
  evidenceRow,
} from "../store/snapshot/evidence-tables.ts";
import { RATING_NAMES } from "../types.ts";
import type { StageContext } from "./context.ts";

const DATES_TABLE = "evidence_dates";
const CLOSES_TABLE = "evidence_closes";
/** The date columns of DATES_TABLE: D, each horizon's D_h, the baseline's two dates. */
const DATE_COLS = ["d", ...HORIZONS.map((h) => `f${h}`), "skip", "lookback"];
/** Columns of the streamed rows: day, ticker order, the seven ratings, then one close per DATE_COLS. */
const RATING_COL = 2;
const CLOSE_COL = RATING_COL + RATING_NAMES.length;

/** The evidence of the ratings and prices in `dir` (the staging folder), written into `ctx.out`. */
export async function writeRatingEvidence(ctx: Pick<StageContext, "conn" | "connect" | "out" | "log">, dir = ctx.out) {
  const t0 = performance.now();
  // inline, other steps query the run's database meanwhile: a connection of this step's own
  const conn = ctx.connect ? await ctx.connect() : ctx.conn;
  const rows = await computeEvidence(conn, dir);
  await writeEvidenceTables(conn, ctx.out, rows);
  ctx.log.info({ ms: Math.round(performance.now() - t0), rows: rows.length }, "rating evidence written");
}

/** Every rating's evidence at every horizon, from the ratings and prices tables in `dir`. */
export async function computeEvidence(conn: Conn, dir: string): Promise<RatingEvidence[]> {
  const ratingDates = await distinctDates(conn, relation(dir, "ratings"));
  const calendar = await distinctDates(conn, relation(dir, "prices"));
  const dates = evaluationDates(ratingDates, calendar);
  await appendTable(
    conn,
    DATES_TABLE,
    DATE_COLS.map((c): [string, "date"] => [c, "date"]),
    dates.map((e) => [e.date, ...HORIZONS.map((h) => e.forward[h]), e.skip, e.lookback]),
  );
  const acc = HORIZONS.map(() => EVIDENCE_RATINGS.map(() => new EvidenceAccumulator()));
  try {
    await stageCloses(conn, relation(dir, "prices"));
    const withForward = new Map(dates.map((e) => [e.date, HORIZONS.map((h) => e.forward[h] !== null)]));
    await eachDate(conn, relation(dir, "ratings"), (day, cols, rows) => {
      const date = isoFromEpochDay(day);
      addDate(acc, date, withForward.get(date)!, cols, rows);
    });
  } finally {
    for (const t of [DATES_TABLE, CLOSES_TABLE]) await conn.run(`drop table if exists ${t}`);
  }
  return HORIZONS.flatMap((horizon, h) =>
    EVIDENCE_RATINGS.map((rating, k) => ({ rating, horizon, ...acc[h][k].summary() })),
  );
}

/** A dated table of `dir` as a relation, with its own bound files (one statement's). */
function relation(dir: string, table: string): Relation {
  const b = new Binds();
  return { sql: datedRelation(dir, table, b), params: b.params };
}
type Relation = { sql: string; params: Binds["params"] };

async function distinctDates(conn: Conn, r: Relation): Promise<string[]> {
  const sql = `select distinct strftime(date, '%Y-%m-%d') d from ${r.sql} order by d`;
  return ((await columns(conn, sql, r.params)) as [string[]])[0];
}

/** The closes on the dates the evidence reads, and nothing else of the prices. */
async function stageCloses(conn: Conn, prices: Relation): Promise<void> {
  const wanted = DATE_COLS.map((c) => `select cast(${ident(c)} as date) from ${DATES_TABLE}`).join(" union ");
  await conn.run(
    `create or replace table ${CLOSES_TABLE} as
      select ticker, date, close from ${prices.sql} where date in (${wanted})`,
    prices.params,
  );
}

type Cols = (Float64Array | Int32Array)[];

/**
 * Streams the rating rows with their closes, ordered by date and ticker, and calls `fn` with each
 * date's rows (a date may span chunks, so they are copied).
 */
async function eachDate(
  conn: Conn,
  ratings: Relation,
  fn: (day: number, cols: Cols, rows: number) => void,
): Promise<void> {
  const nan = (x: string) => `coalesce(${x}, 'NaN'::double)`;
  const joins = DATE_COLS.map(
    (c, i) => `left join ${CLOSES_TABLE} c${i} on c${i}.ticker = r.ticker and c${i}.date = cast(e.${ident(c)} as date)`,
  );
  const sql = `select (r.date - date '1970-01-01')::integer, (dense_rank() over (order by r.ticker))::integer,
    ${RATING_NAMES.map((n) => nan(`round(r.${ident(n)}, 4)`)).join(", ")},
    ${DATE_COLS.map((_, i) => nan(`c${i}.close::double`)).join(", ")}
    from ${ratings.sql} r join ${DATES_TABLE} e on r.date = cast(e.d as date) ${joins.join(" ")}
    order by 1, 2`;
  const width = CLOSE_COL + DATE_COLS.length;
  // the date's rows so far: slices of the chunks it spans (a chunk's arrays are reused after the callback)
  let parts: Float64Array[][] = [];
  let day: number | null = null;
  const flush = () => {
    const rows = parts.reduce((n, p) => n + p[0].length, 0);
    if (day !== null && rows) fn(day, parts.length === 1 ? parts[0] : joined(parts, width, rows), rows);
    parts = [];
  };
  await eachNumericChunk(
    conn,
    sql,
    width,
    (cols, n) => {
      let from = 0;
      for (let i = 0; i <= n; i++) {
        if (i < n && cols[0][i] === day) continue;
        if (i > from) parts.push(cols.map((c) => Float64Array.from(c.subarray(from, i))));
        if (i === n) break;
        flush();
        day = cols[0][i];
        from = i;
      }
    },
    ratings.params,
  );
  flush();
}

/** One date's slices as whole columns. */
function joined(parts: Float64Array[][], width: number, rows: number): Float64Array[] {
  return Array.from({ length: width }, (_, c) => {
    const out = new Float64Array(rows);
    let at = 0;
    for (const p of parts) {
      out.set(p[c], at);
      at += p[c].length;
    }
    return out;
  });
}

/**
 * One date's rows into every rating's and horizon's accumulator: each rating sorted once, each
 * horizon's forward returns sorted once, every pair evaluated over its rows (evaluateSorted).
 */
function addDate(acc: EvidenceAccumulator[][], date: string, hasForward: boolean[], cols: Cols, rows: number) {
  const order = cols[1];
  const c0 = cols[CLOSE_COL];
  const skip = cols[CLOSE_COL + 1 + HORIZONS.length];
  const lookback = cols[CLOSE_COL + 2 + HORIZONS.length];
  const signals = EVIDENCE_RATINGS.map((_, k) =>
    k < RATING_NAMES.length ? cols[RATING_COL + k] : Float64Array.from(skip, (s, i) => s / lookback[i] - 1),
  );
  const byRating = signals.map((v) => sortedRows(v, order));
  HORIZONS.forEach((_, h) => {
    if (!hasForward[h]) return; // no D_h: not evaluated
    const ch = cols[CLOSE_COL + 1 + h];
    const forward = Float64Array.from({ length: rows }, (_, i) => ch[i] / c0[i] - 1);
    const byForward = sortedRows(forward, order);
    signals.forEach((rating, k) => {
      const d = evaluateSorted(date, { order, rating, forward, byRating: byRating[k], byForward });
      if (d) acc[h][k].add(d);
    });
  });
}

/** The two evidence tables, written into `out` by rename. */
async function writeEvidenceTables(conn: Conn, out: string, rows: RatingEvidence[]): Promise<void> {
  await appendTable(conn, EVIDENCE_TABLE, EVIDENCE_SUMMARY_COLUMNS, rows.map(evidenceRow));
  await appendTable(
    conn,
    EVIDENCE_IC_TABLE,
    EVIDENCE_IC_COLUMNS,
    rows.flatMap((r) => r.ic.map((p) => [r.rating, r.horizon, p.date, p.ic, p.stocks])),
  );
  try {
    await exportParquet(conn, EVIDENCE_TABLE, out, [], "horizon, ord");
    await exportParquet(conn, EVIDENCE_IC_TABLE, out, ["date"], "horizon, rating, date");
  } finally {
    for (const t of [EVIDENCE_TABLE, EVIDENCE_IC_TABLE]) await conn.run(`drop table if exists ${t}`);
  }
}
