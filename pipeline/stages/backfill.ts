// Backfill: a source that carries only a window of dates replaces exactly that window of the
// published history. Rows of the current snapshot outside [from, to] are kept; the source's
// rows inside it replace the rest; tables the source does not give are kept whole.
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { StagedSource } from "../sources/index.ts";
import type { PortfolioSource } from "../sources/portfolios-json.ts";
import { datedRelation } from "../store/dated-parts.ts";
import { type Conn, columns, lit } from "../store/duck.ts";
import { loadSnapshotBenchmarks } from "../store/load-snapshot.ts";
import type { PortfolioRules } from "../types.ts";

export interface DateWindow {
  from: string;
  to: string;
}

const DATED = ["prices", "ratings", "benchmarks"] as const;

export async function mergeWindow(conn: Conn, staged: StagedSource, currentDir: string, w: DateWindow): Promise<void> {
  const pq = (t: string) => `read_parquet(${lit(join(currentDir, `${t}.parquet`))})`;
  const inside = `date between ${lit(w.from)}::date and ${lit(w.to)}::date`;
  for (const t of DATED) {
    // Benchmark index levels are stored as benchmark_source in the snapshot.
    const stored = t === "benchmarks" ? "benchmark_source" : t;
    if (!existsSync(join(currentDir, `${stored}.parquet`))) continue;
    const published = datedRelation(currentDir, stored);
    if (staged.tables.has(t)) {
      await conn.run(`create or replace table ${t} as
        select * from ${published} where not (${inside})
        union all by name select * from ${t} where ${inside}`);
    } else {
      await conn.run(`create or replace table ${t} as select * from ${published}`);
      staged.tables.add(t);
    }
  }
  if (!staged.portfoliosGiven) staged.portfolios = await publishedDefinitions(conn, currentDir);
  // Companies: the source's rows win; companies only the snapshot knows stay.
  await conn.run(`insert into companies by name
    select id, ticker, name, sector, industry, shares_outstanding, market_cap from ${pq("companies")}
    where ticker not in (select ticker from companies)`);
}

/** Predefined portfolios and benchmarks of the published snapshot, for a backfill source without portfolios.json. */
export async function publishedDefinitions(conn: Conn, currentDir: string): Promise<PortfolioSource> {
  const [rules = []] = (await columns(
    conn,
    `select rules from read_parquet(${lit(join(currentDir, "portfolios.parquet"))}) where owner_id is null order by id`,
  )) as [string[]];
  const benchmarks = (await loadSnapshotBenchmarks(conn, currentDir)).map(({ levels: _levels, ...def }) => def);
  return { portfolios: rules.map((r) => JSON.parse(r) as PortfolioRules), benchmarks };
}
