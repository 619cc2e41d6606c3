// The published evidence against a second implementation: the same definitions (docs/ratings.md,
// "The evidence") written as one DuckDB SQL query over the snapshot's own `ratings` and `prices`
// tables (DuckDB's month arithmetic, window ranks and corr, none of the step's code), on a
// generated sample published by the pipeline.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ReaderSource } from "../../api/resources/reader-source.ts";
import { generateSample } from "../../data/generate.ts";
import { runPipeline } from "../../jobs/local/runner.ts";
import { Catalog } from "../../pipeline/store/catalog/catalog.ts";
import { openDuck, rows } from "../../pipeline/store/duck/duck.ts";
import { readRatingEvidence } from "../../pipeline/store/read/evidence-read.ts";
import { SnapshotReader } from "../../pipeline/store/read/snapshot-reader.ts";
import { readManifest, snapshotDir } from "../../pipeline/store/snapshot/snapshots.ts";
import { RATING_NAMES } from "../../pipeline/types.ts";

const silent = { info: () => undefined, warn: () => undefined };

/** Every rating as (d, ticker, rating, value): the seven rounded as served, and 12-1 momentum. */
const SIGNALS = `
  cal as (select date, row_number() over (order by date) as i from (select distinct date from px)),
  signals as (
    ${RATING_NAMES.map((n) => `select date d, ticker, '${n}' rating, round("${n}", 4) v from rt`).join(" union all ")}
    union all
    select r.date, r.ticker, 'momentum_12_1_baseline', ps.close / pl.close - 1
    from rt r join cal c on c.date = r.date join cal cs on cs.i = c.i - 21 join cal cl on cl.i = c.i - 252
    join px ps on ps.ticker = r.ticker and ps.date = cs.date join px pl on pl.ticker = r.ticker and pl.date = cl.date),
  fwd as (
    select d, h, (select min(date) from cal where date >= d + to_months(h)) dh
    from (select distinct date d from rt), (select unnest([1, 3, 6, 12]) h)),
  obs as (
    select s.rating, f.h, s.d, s.ticker, s.v, p1.close / p0.close - 1 ret
    from signals s join fwd f on f.d = s.d
    join px p0 on p0.ticker = s.ticker and p0.date = s.d join px p1 on p1.ticker = s.ticker and p1.date = f.dh
    where s.v is not null and f.dh is not null),
  ranked as (
    select *, count(*) over g n,
      rank() over (partition by rating, h, d order by v) + (count(*) over (partition by rating, h, d, v) - 1) / 2 rx,
      rank() over (partition by rating, h, d order by ret)
        + (count(*) over (partition by rating, h, d, ret) - 1) / 2 ry,
      row_number() over (partition by rating, h, d order by v, ticker) - 1 p
    from obs window g as (partition by rating, h, d)),
  dated as (
    select rating, h, d, corr(rx, ry) ic, count(*) stocks from ranked where n >= 20 group by all having isfinite(ic)),
  buckets as (
    select r.rating, r.h, r.d, floor(5 * p / n) q, avg(ret) m, list(ticker) tickers
    from ranked r semi join dated t on t.rating = r.rating and t.h = r.h and t.d = r.d group by all),
  tops as (
    select rating, h, d, tickers, lag(tickers) over (partition by rating, h order by d) prev from buckets where q = 4)`;

const SUMMARY = `with ${SIGNALS},
  turnover as (
    select rating, h, avg(len(list_filter(tickers, t -> not list_contains(prev, t))) / len(tickers)) turnover
    from tops where prev is not null group by all),
  quint as (select rating, h, q, avg(m) m from buckets group by all)
  select t.rating, t.h, count(*)::integer dates, avg(ic) mean_ic, stddev_samp(ic) ic_std,
    avg(case when ic > 0 then 1 else 0 end) hit_rate, any_value(u.turnover) turnover,
    (select list(m order by q) from quint x where x.rating = t.rating and x.h = t.h) quintiles
  from dated t left join turnover u using (rating, h) group by all order by t.h, t.rating`;

const SERIES = `with ${SIGNALS} select rating, h, strftime(d, '%Y-%m-%d') date, ic, stocks::integer stocks
  from dated order by h, rating, d`;

let dir: string;
let dataDir: string;

beforeAll(async () => {
  const { outDir } = await generateSample(mkdtempSync(join(tmpdir(), "evidence-src-")), {
    seed: 3,
    companies: 40,
    years: 3,
  });
  dataDir = mkdtempSync(join(tmpdir(), "evidence-data-"));
  const catalog = await Catalog.open(join(dataDir, "catalog.duckdb"));
  await runPipeline({ dataDir, sourceDir: outDir, catalog, log: silent, workers: 0 });
  dir = snapshotDir(dataDir, readManifest(dataDir)!.snapshotId);
}, 120_000);

async function reference() {
  const db = await openDuck();
  try {
    await db.conn.run("create table px as select * from read_parquet($f)", { f: join(dir, "prices.parquet") });
    await db.conn.run("create table rt as select * from read_parquet($f)", { f: join(dir, "ratings.parquet") });
    return { summary: await rows<Record<string, unknown>>(db.conn, SUMMARY), series: await rows(db.conn, SERIES) };
  } finally {
    db.close();
  }
}

describe("the stored evidence against DuckDB SQL over the snapshot's tables", () => {
  it("has the same evaluated dates, ICs, summary, quintiles and turnover for every rating and horizon", async () => {
    const stored = await (async () => {
      const db = await openDuck();
      try {
        return await readRatingEvidence(db.conn, dir);
      } finally {
        db.close();
      }
    })();
    const ref = await reference();
    // every rating and the baseline at every horizon evaluated something on this sample
    expect(stored).toHaveLength(32);
    expect(ref.summary).toHaveLength(32);
    for (const s of stored) {
      const r = ref.summary.find((x) => x.rating === s.rating && x.h === s.horizon)!;
      expect(r, `${s.rating} ${s.horizon}`).toBeDefined();
      expect(s.dates).toBe(r.dates);
      expect(s.meanIc).toBeCloseTo(r.mean_ic as number, 12);
      expect(s.icStd).toBeCloseTo(r.ic_std as number, 12);
      expect(s.hitRate).toBeCloseTo(r.hit_rate as number, 12);
      expect(s.tStat).toBeCloseTo((r.mean_ic as number) / ((r.ic_std as number) / Math.sqrt(s.dates)), 9);
      expect(s.topTurnover).toBeCloseTo(r.turnover as number, 12);
      const q = r.quintiles as number[];
      for (const [i, v] of s.quintileReturns.entries()) expect(v).toBeCloseTo(q[i], 12);
      expect(s.spread).toBeCloseTo(q[4] - q[0], 12);
      const series = ref.series.filter((x) => x.rating === s.rating && x.h === s.horizon);
      expect(s.ic.map((p) => [p.date, p.stocks])).toEqual(series.map((x) => [x.date, x.stocks]));
      for (const [i, p] of s.ic.entries()) expect(p.ic).toBeCloseTo(series[i].ic as number, 12);
    }
    // and the server's reader serves what is stored
    const reader = await SnapshotReader.open(dataDir, readManifest(dataDir)!.snapshotId);
    try {
      expect(await new ReaderSource(reader).ratingEvidence()).toEqual(stored);
    } finally {
      reader.close();
    }
  });
});
