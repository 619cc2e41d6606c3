// Backfill: a source that carries only a window of dates replaces exactly that window of the
// published history. Rows of the current snapshot outside [from, to] are kept; the source's
// rows inside it replace the rest; tables the source does not give are kept whole.
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { StagedSource } from "../sources/index.ts";
import type { PortfolioSource } from "../sources/portfolios-json.ts";
import { Binds, type Conn, columns, run } from "../store/duck/duck.ts";
import { loadSnapshotBenchmarks } from "../store/read/load-snapshot.ts";
import { datedRelation } from "../store/snapshot/dated-parts.ts";
import type { PortfolioRules } from "../types.ts";

export interface DateWindow {
  from: string;
  to: string;
}

const DATED = ["prices", "ratings", "benchmarks"] as const;

export async function mergeWindow(conn: Conn, staged: StagedSource, currentDir: string, w: DateWindow): Promise<void> {
  const inside = (b: Binds) => `date between ${b.v(w.from)}::date and ${b.v(w.to)}::date`;
  for (const t of DATED) {
    // Benchmark index levels are stored as benchmark_source in the snapshot.
    const stored = t === "benchmarks" ? "benchmark_source" : t;
    if (!existsSync(join(currentDir, `${stored}.parquet`))) continue;
    const b = new Binds();
    const published = datedRelation(currentDir, stored, b);
    if (staged.tables.has(t)) {
      const i = inside(b);
      await run(
        conn,
        `create or replace table ${t} as
        select * from ${published} where not (${i})
        union all by name select * from ${t} where ${i}`,
        b.params,
      );
    } else {
      await run(conn, `create or replace table ${t} as select * from ${published}`, b.params);
      staged.tables.add(t);
    }
  }
  if (!staged.portfoliosGiven) staged.portfolios = await publishedDefinitions(conn, currentDir);
  // Companies: the source's rows win; companies only the snapshot knows stay.
  await conn.run(
    `insert into companies by name
    select id, ticker, name, sector, industry, shares_outstanding, market_cap from read_parquet($f)
    where ticker not in (select ticker from companies)`,
    { f: join(currentDir, "companies.parquet") },
  );
}

/** Predefined portfolios and benchmarks of the published snapshot, for a backfill source without portfolios.json. */
export async function publishedDefinitions(conn: Conn, currentDir: string): Promise<PortfolioSource> {
  const [rules = []] = (await columns(conn, "select rules from read_parquet($f) where owner_id is null order by id", {
    f: join(currentDir, "portfolios.parquet"),
  })) as [string[]];
  const benchmarks = (await loadSnapshotBenchmarks(conn, currentDir)).map(({ levels: _levels, ...def }) => def);
  return { portfolios: rules.map((r) => JSON.parse(r) as PortfolioRules), benchmarks };
}
