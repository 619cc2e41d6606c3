// Stage 1: read and validate every source table; nothing is computed until the whole source is clean.
import { join } from "node:path";
import { readFundamentals } from "../sources/fundamentals.ts";
import { SourceRejectedError, stageSource, type StagedSource } from "../sources/index.ts";
import { columns, type Conn } from "../store/duck.ts";
import { appendTable, exportParquet } from "../store/write.ts";
import type { CompanyFinancials } from "../store/model.ts";
import type { StageContext } from "./context.ts";

export interface IngestResult {
  source: StagedSource;
  financials: Map<string, CompanyFinancials>;
}

/** `merge` runs on the clean staged tables before anything is derived (backfill uses it). */
export async function ingestStage(ctx: StageContext, sourceDir: string, merge?: (s: StagedSource) => Promise<void>): Promise<IngestResult> {
  const step = (name: string, done: number, total: number) => ctx.progress?.(`ingest: ${name}`, done, total);
  const source = await stageSource(ctx.conn, sourceDir, { partial: merge !== undefined, progress: step });
  step("fundamentals", 0, 2);
  const fundamentals = await readFundamentals(join(sourceDir, "fundamentals"));
  const rejects = [...source.rejects, ...fundamentals.rejects];
  if (source.rejectCount + fundamentals.rejects.length > 0) throw new SourceRejectedError(rejects, source.rejectCount + fundamentals.rejects.length);
  await merge?.(source);
  step("writing tables", 1, 2);
  await companiesWithIds(ctx);
  await exportParquet(ctx.conn, "companies", ctx.out, [], "ticker");
  await exportParquet(ctx.conn, "prices", ctx.out, [], "ticker, date");
  if (source.tables.has("ratings")) await exportParquet(ctx.conn, "ratings", ctx.out, [], "date, ticker");
  if (source.tables.has("benchmarks")) {
    await ctx.conn.run(`create or replace view benchmark_source as select * from benchmarks`);
    await exportParquet(ctx.conn, "benchmark_source", ctx.out, [], "benchmark, date");
  }
  await appendTable(ctx.conn, "financials", [["ticker", "varchar"], ["data", "varchar"]], [...fundamentals.byTicker].map(([t, f]) => [t.toUpperCase(), JSON.stringify(f)]));
  await exportParquet(ctx.conn, "financials", ctx.out, [], "ticker");
  ctx.log.info({ rows: source.rowCounts, fundamentals: fundamentals.byTicker.size }, "source ingested");
  return { source, financials: fundamentals.byTicker };
}

/**
 * Completes the companies table: ids (from the source, else assigned once by the catalog and
 * kept), stable sector and industry ids, and market cap (given, else shares × last close).
 */
async function companiesWithIds(ctx: StageContext): Promise<void> {
  const conn: Conn = ctx.conn;
  const [tickers, ids, sectors, industries] = (await columns(conn, "select ticker, id, sector, industry from companies order by ticker")) as string[][];
  const assigned = await ctx.catalog.assignIds("company", tickers.filter((_, i) => !ids[i]));
  const sectorIds = await ctx.catalog.assignIds("sector", sectors);
  const industryIds = await ctx.catalog.assignIds("industry", industries);
  const given = new Set(ids.filter(Boolean));
  const rowsOut = tickers.map((t, i) => {
    let id = ids[i] || String(assigned.get(t));
    // An assigned id never shadows an id the source gave another company.
    if (!ids[i] && given.has(id)) id = `${id}-${t}`;
    return [t, id, sectorIds.get(sectors[i])!, industryIds.get(industries[i])!];
  });
  await appendTable(conn, "company_ids", [["ticker", "varchar"], ["id", "varchar"], ["sector_id", "integer"], ["industry_id", "integer"]], rowsOut);
  await conn.run(`create or replace table companies as
    select i.id, c.ticker, c.name, c.sector, i.sector_id, c.industry, i.industry_id, c.shares_outstanding,
           round(coalesce(c.market_cap, c.shares_outstanding * l.last_close)) as market_cap
    from companies c join company_ids i using (ticker)
    left join (select ticker, arg_max("close", date) as last_close from prices group by ticker) l using (ticker)
    order by ticker`);
  await conn.run(`drop table company_ids`);
}
